// The snapshot store's overlay (xds/snapshot/snapshot-store.ts): filter configs served on their own
// (ECDS) that change between builds. Every served snapshot carries the overlay, builds never undo
// it, only the overlay type's version moves when it changes, and nothing is served before a build.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RESOURCE_TYPES } from '../../../src/proto/type-urls.js';
import { denyHeaderFilterConfig } from '../../support/ecds-filter.js';
import { OVERLAY_TYPE, SnapshotStore } from '../../../src/xds/snapshot/snapshot-store.js';
import type { EncodedResource, Snapshot } from '../../../src/xds/snapshot/types.js';
import { baseSpec, buildSnapshot, route } from './server/helpers.js';

const overlayOf = (...resources: EncodedResource[]): Map<string, EncodedResource> =>
  new Map(resources.map((resource) => [resource.name, resource]));

test('nothing is served before a build; then the build carries the overlay', () => {
  const store = new SnapshotStore();
  assert.equal(store.overlay(overlayOf(denyHeaderFilterConfig('fast-path', 'x-a'))), false);
  assert.equal(store.current(), undefined);
  const build = buildSnapshot(baseSpec());
  assert.equal(store.publish(build), true);
  const served = store.current() as Snapshot;
  assert.deepEqual([...served.resources[OVERLAY_TYPE].keys()], ['fast-path']);
  for (const type of RESOURCE_TYPES) {
    if (type === OVERLAY_TYPE) assert.notEqual(served.typeVersions[type], build.typeVersions[type]);
    else assert.equal(served.typeVersions[type], build.typeVersions[type], type);
  }
});

test('an overlay change moves only its type version; a later build keeps the overlay; removing it restores the build', () => {
  const store = new SnapshotStore();
  const build = buildSnapshot(baseSpec());
  store.publish(build);
  assert.equal(store.current(), build, 'without an overlay the build is served as it is');
  const seen: Snapshot[] = [];
  store.subscribe((snapshot) => seen.push(snapshot));
  assert.equal(store.overlay(overlayOf(denyHeaderFilterConfig('fast-path', 'x-a'))), true);
  const first = store.current() as Snapshot;
  assert.equal(
    store.overlay(overlayOf(denyHeaderFilterConfig('fast-path', 'x-a'))),
    false,
    'the same overlay again',
  );
  assert.equal(store.overlay(overlayOf(denyHeaderFilterConfig('fast-path', 'x-b'))), true);
  const second = store.current() as Snapshot;
  assert.notEqual(second.typeVersions[OVERLAY_TYPE], first.typeVersions[OVERLAY_TYPE]);
  assert.notEqual(second.version, first.version);
  const next = buildSnapshot({ ...baseSpec(), routes: [route('r1', 'c2')] });
  store.publish(next);
  const third = store.current() as Snapshot;
  assert.equal(
    third.typeVersions[OVERLAY_TYPE],
    second.typeVersions[OVERLAY_TYPE],
    'the build kept the overlay',
  );
  assert.notEqual(
    third.typeVersions['envoy.config.route.v3.RouteConfiguration'],
    second.typeVersions['envoy.config.route.v3.RouteConfiguration'],
  );
  assert.equal(store.overlay(new Map()), true);
  assert.equal(store.current(), next);
  assert.equal(seen.length, 4, 'each change told the subscribers once');
});

// The pure snapshot steps of make-before-break: what retires, the snapshot that keeps it, and the
// one that adds clusters under the old routes. Each is versioned exactly as a snapshot built from
// scratch with the same resources would be (a reconnecting Envoy sees no churn).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ProtoObject } from '../../../src/xds/codec/codec.js';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  LISTENER_TYPE,
  ROUTE_CONFIGURATION_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
} from '../../../src/xds/codec/type-urls.js';
import { buildSnapshot } from '../../../src/xds/snapshot/build-snapshot.js';
import { addsClusters, retiredBy, withClustersOf, withRetiring } from '../../../src/xds/snapshot/retiring.js';
import type { Snapshot } from '../../../src/xds/snapshot/types.js';
import { cluster, endpoints, listener, route } from './server/helpers.js';

function snap(
  clusters: readonly string[],
  target: string,
  extra: Record<string, ProtoObject> = {},
): Snapshot {
  const names = [...clusters].sort();
  return buildSnapshot({
    [CLUSTER_TYPE]: names.map((name) => ({ name, message: extra[name] ?? cluster(name) })),
    [CLUSTER_LOAD_ASSIGNMENT_TYPE]: names.map((name) => ({ name, message: endpoints(name) })),
    [LISTENER_TYPE]: [{ name: 'l1', message: listener('l1', 'r1') }],
    [SCOPED_ROUTE_CONFIGURATION_TYPE]: [],
    [ROUTE_CONFIGURATION_TYPE]: [{ name: 'r1', message: route('r1', target) }],
  }).snapshot;
}

test('withRetiring keeps what the served snapshot had and the next lacks, versioned as if built whole', () => {
  const served = snap(['a', 'b', 'c'], 'b');
  const next = snap(['a', 'c'], 'a');
  const retiring = retiredBy(served, next);
  assert.deepEqual([...retiring[CLUSTER_TYPE].keys()], ['b']);
  assert.deepEqual([...retiring[CLUSTER_LOAD_ASSIGNMENT_TYPE].keys()], ['b']);
  const kept = withRetiring(next, retiring);
  assert.deepEqual([...kept.resources[CLUSTER_TYPE].keys()], ['a', 'b', 'c'], 'in name order');
  const whole = snap(['a', 'b', 'c'], 'a');
  assert.equal(kept.version, whole.version);
  assert.deepEqual(kept.typeVersions, whole.typeVersions);
  assert.equal(withRetiring(next, retiredBy(next, next)), next, 'nothing retires: the build itself');
});

test('withClustersOf: the served routes with the new clusters and every served one', () => {
  const served = snap(['a', 'b1'], 'b1');
  const next = snap(['a', 'b2'], 'b2', { a: cluster('a', { connect_timeout: { seconds: 4 } }) });
  assert.ok(addsClusters(served, next));
  assert.ok(!addsClusters(served, snap(['a'], 'a')), 'dropping adds nothing');
  const adding = withClustersOf(served, next);
  assert.deepEqual([...adding.resources[CLUSTER_TYPE].keys()], ['a', 'b1', 'b2']);
  assert.equal(
    adding.resources[CLUSTER_TYPE].get('a')?.version,
    next.resources[CLUSTER_TYPE].get('a')?.version,
    "a kept cluster is the build's",
  );
  const whole = snap(['a', 'b1', 'b2'], 'b1', { a: cluster('a', { connect_timeout: { seconds: 4 } }) });
  assert.equal(adding.version, whole.version, 'versioned as if built whole');
  assert.deepEqual(adding.typeVersions, whole.typeVersions);
  assert.ok(!addsClusters(adding, next), 'after it, the build adds nothing');
});

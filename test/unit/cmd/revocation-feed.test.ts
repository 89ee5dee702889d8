// The composition root's revocation feed (cmd/revocation-feed.ts): a proxy alone opens the session
// stack for it only with the fast path on and a databroker to reach; the feed runs where the proxy
// or authorize does, publishes into the snapshot store's overlay only where the proxy runs (beside
// any other overlay resource), follows each build's lifetime, and closes with the process.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { proxyNeedsSessions, startRevocationFeed } from '../../../src/cmd/revocation-feed.js';
import type { Closer } from '../../../src/cmd/service-table.js';
import { servicePartsOf } from '../../../src/cmd/services.js';
import type { IR } from '../../../src/ir/types.js';
import type { Reloader } from '../../../src/runtime/reloader.js';
import type { BuildSubscriber } from '../../../src/runtime/subscribers.js';
import type { GoodBuild } from '../../../src/runtime/build-pipeline.js';
import { silentLogger } from '../../../src/shared/logger.js';
import { FAST_PATH_FILTER } from '../../../src/contract/fast-path.js';
import { OVERLAY_TYPE, SnapshotStore } from '../../../src/xds/snapshot/snapshot-store.js';
import { denyHeaderFilterConfig } from '../../support/ecds-filter.js';
import { waitFor } from '../../support/wait.js';
import { baseSpec, buildSnapshot } from '../xds/server/helpers.js';
import { recordingCompile } from '../../support/revocation-compile.js';

/** The slice of the IR the wiring reads. */
function ir(lifetimeMs: number, serviceUrl?: string): IR {
  return {
    authorize: { decisionTokenLifetimeMs: lifetimeMs },
    process: { databroker: { serviceUrl } },
  } as unknown as IR;
}

/** A reload loop that hands each subscriber `first` at once and `reload(ir)` later. */
function fakeReloader(first: IR) {
  const subscribers: BuildSubscriber[] = [];
  const build = (next: IR) => ({ ir: next }) as unknown as GoodBuild;
  return {
    reloader: {
      subscribe(subscriber: BuildSubscriber) {
        subscriber.publish(build(first));
        subscribers.push(subscriber);
      },
    } as unknown as Reloader,
    subscribers,
    reload: (next: IR) => subscribers.forEach((subscriber) => subscriber.publish(build(next))),
  };
}

test('a proxy alone opens the session stack only with the fast path on and databroker_service_url', () => {
  const proxy = servicePartsOf(['proxy']);
  assert.equal(proxyNeedsSessions(proxy, ir(120_000, 'https://databroker:5443')), true);
  assert.equal(proxyNeedsSessions(proxy, ir(0, 'https://databroker:5443')), false, 'fast path off');
  assert.equal(proxyNeedsSessions(proxy, ir(120_000)), false, 'nowhere to reach: the feed refuses all');
  assert.equal(
    proxyNeedsSessions(servicePartsOf(['proxy', 'authorize']), ir(120_000, 'https://databroker:5443')),
    false,
    'authorize opens it anyway',
  );
  assert.equal(
    proxyNeedsSessions(servicePartsOf(['authorize']), ir(120_000, 'https://databroker:5443')),
    false,
  );
});

test('no feed where neither the proxy nor authorize runs', () => {
  const { reloader, subscribers } = fakeReloader(ir(120_000));
  const closers: Closer[] = [];
  const feed = startRevocationFeed({
    parts: servicePartsOf(['authenticate', 'databroker']),
    stack: undefined,
    store: new SnapshotStore(),
    reloader,
    initial: ir(120_000),
    logger: silentLogger,
    closers,
  });
  assert.equal(feed, undefined);
  assert.equal(subscribers.length, 0);
  assert.equal(closers.length, 0);
});

test('where the proxy runs the feed publishes into the overlay and follows reloads; authorize alone only keeps the set', async () => {
  for (const [services, publishes] of [
    [['proxy'], true],
    [['authorize'], false],
  ] as const) {
    const store = new SnapshotStore();
    const overlays: number[] = [];
    const overlay = store.overlay.bind(store);
    store.overlay = (resources) => {
      overlays.push(resources.size);
      return overlay(resources);
    };
    const { reloader, subscribers, reload } = fakeReloader(ir(0));
    const closers: Closer[] = [];
    const feed = startRevocationFeed({
      parts: servicePartsOf(services),
      stack: undefined,
      store,
      reloader,
      initial: ir(0),
      logger: silentLogger,
      closers,
      compile: recordingCompile().compile,
    });
    assert.ok(feed !== undefined, services.join());
    assert.deepEqual(
      subscribers.map((subscriber) => subscriber.name),
      ['fast-path-revocations'],
    );
    assert.deepEqual(overlays, [], 'the fast path is off: nothing published');
    reload(ir(120_000));
    assert.deepEqual(overlays, publishes ? [1] : [], `${services.join()}: turned on, published at once`);
    assert.equal(feed.revokedUntil('any'), Number.POSITIVE_INFINITY, 'no session store: nothing is minted');
    assert.equal(closers.length, 1);
    await closers[0]?.(0);
  }
});

test("the proxy's feed replaces only its own filter in the overlay", async () => {
  const store = new SnapshotStore();
  store.publish(buildSnapshot(baseSpec()));
  const other = denyHeaderFilterConfig('another-filter', 'x-a');
  store.overlay(new Map([[other.name, other]]));
  const { reloader, reload } = fakeReloader(ir(0));
  const closers: Closer[] = [];
  startRevocationFeed({
    parts: servicePartsOf(['proxy']),
    stack: undefined,
    store,
    reloader,
    initial: ir(0),
    logger: silentLogger,
    closers,
    compile: recordingCompile().compile,
  });
  reload(ir(120_000));
  const served = () => [...(store.current()?.resources[OVERLAY_TYPE].keys() ?? [])];
  assert.deepEqual(served(), ['another-filter', FAST_PATH_FILTER]);
  reload(ir(0));
  await waitFor(async () => served().length === 1 && served()[0] === 'another-filter', {
    what: 'the fast path filter removed, the other kept',
  });
  for (const close of closers) await close(0);
});

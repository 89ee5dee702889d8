// MakeBeforeBreak wires the retirement policy to the snapshot store and ADS events: what the store
// publishes, when, and when the state kept for older routes may go (onSettled).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { recordingLogger } from '../../../../src/shared/logger.js';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  LISTENER_TYPE,
  ROUTE_CONFIGURATION_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
  TYPED_EXTENSION_CONFIG_TYPE,
} from '../../../../src/proto/type-urls.js';
import type { AdsStreamEvent } from '../../../../src/xds/server/events.js';
import { buildSnapshot } from '../../../../src/xds/snapshot/build-snapshot.js';
import { SnapshotStore } from '../../../../src/xds/snapshot/snapshot-store.js';
import type { Snapshot } from '../../../../src/xds/snapshot/types.js';
import { MakeBeforeBreak } from '../../../../src/xds/publish/make-before-break.js';
import { cluster, endpoints, listener, route } from '../server/helpers.js';

function snap(clusters: readonly string[], target: string): Snapshot {
  return buildSnapshot({
    [CLUSTER_TYPE]: clusters.map((name) => ({ name, message: cluster(name) })),
    [CLUSTER_LOAD_ASSIGNMENT_TYPE]: clusters.map((name) => ({ name, message: endpoints(name) })),
    [LISTENER_TYPE]: [{ name: 'l1', message: listener('l1', 'r1') }],
    [SCOPED_ROUTE_CONFIGURATION_TYPE]: [],
    [TYPED_EXTENSION_CONFIG_TYPE]: [],
    [ROUTE_CONFIGURATION_TYPE]: [{ name: 'r1', message: route('r1', target) }],
  }).snapshot;
}

function routesAcked(stream: number, snapshot: Snapshot): AdsStreamEvent[] {
  return ([LISTENER_TYPE, ROUTE_CONFIGURATION_TYPE] as const).map((type) => ({
    kind: 'acked',
    stream,
    nodeId: 'envoy',
    type,
    version: snapshot.typeVersions[type],
  }));
}

/** Lets queued microtasks (the publisher's check) run. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function setup(): {
  publisher: MakeBeforeBreak;
  store: SnapshotStore;
  published: Snapshot[];
  settled: () => number;
} {
  const store = new SnapshotStore();
  const published: Snapshot[] = [];
  store.subscribe((snapshot) => published.push(snapshot));
  let settled = 0;
  const publisher = new MakeBeforeBreak({
    store,
    logger: recordingLogger(),
    onSettled: () => (settled += 1),
  });
  return { publisher, store, published, settled: () => settled };
}

test('publishes the retiring snapshot, then the plain one after the ACK, and says so once', async () => {
  const { publisher, store, published, settled } = setup();
  const first = snap(['a', 'b'], 'b');
  const second = snap(['a'], 'a');
  publisher.publish(first);
  for (const event of routesAcked(1, first)) publisher.observe(event);
  assert.equal(settled(), 1);
  publisher.publish(second);
  assert.deepEqual([...(store.current()?.resources[CLUSTER_TYPE].keys() ?? [])], ['a', 'b']);
  assert.deepEqual(publisher.retiring().clusters, ['b']);
  assert.ok(publisher.waiting);
  assert.equal(settled(), 1, 'not yet');
  for (const event of routesAcked(1, second)) publisher.observe(event);
  assert.equal(store.current()?.version, published.at(-1)?.version);
  assert.notEqual(store.current(), second, 'checked on the next turn, not inside the stream');
  await turn();
  assert.equal(store.current(), second);
  assert.equal(settled(), 2);
  assert.equal(published.length, 3, 'first, retiring, plain');
});

test('with no Envoy connected a build is published as it is and settles at once', () => {
  const { publisher, store, published, settled } = setup();
  publisher.publish(snap(['a', 'b'], 'b'));
  const second = snap(['a'], 'a');
  publisher.publish(second);
  assert.equal(store.current(), second);
  assert.equal(published.length, 2);
  assert.equal(settled(), 2);
});

test('a stream that closes while others ACKed ends the wait', async () => {
  const { publisher, store, settled } = setup();
  const first = snap(['a', 'b'], 'b');
  const second = snap(['a'], 'a');
  publisher.publish(first);
  for (const event of [...routesAcked(1, first), ...routesAcked(2, first)]) publisher.observe(event);
  publisher.publish(second);
  for (const event of routesAcked(1, second)) publisher.observe(event);
  await turn();
  assert.notEqual(store.current(), second, 'stream 2 still routes to b');
  publisher.observe({ kind: 'closed', stream: 2, nodeId: 'envoy' });
  await turn();
  assert.equal(store.current(), second);
  assert.equal(settled(), 2);
});

// Make-before-break removal as a pure state machine: snapshots in, fake ADS events in, the
// snapshot to serve out. A dropped cluster stays served until every stream's Envoy holds the
// routes that no longer use it; then the build's own snapshot (the one a restart serves) goes out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  LISTENER_TYPE,
  ROUTE_CONFIGURATION_TYPE,
  type ResourceType,
} from '../../../../src/proto/type-urls.js';
import type { AdsStreamEvent } from '../../../../src/xds/server/events.js';
import type { Snapshot } from '../../../../src/xds/snapshot/types.js';
import { Retirement } from '../../../../src/xds/publish/retirement.js';
import { cluster, routedSnapshot } from '../server/helpers.js';

const snap = routedSnapshot;

const HELD: readonly ResourceType[] = [
  CLUSTER_TYPE,
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  LISTENER_TYPE,
  ROUTE_CONFIGURATION_TYPE,
];

/** The events of a stream whose Envoy ACKed every type of `snapshot` (SRDS never asked for). */
function acked(stream: number, snapshot: Snapshot, types = HELD): AdsStreamEvent[] {
  return types.map((type) => ({
    kind: 'acked',
    stream,
    nodeId: `envoy-${stream}`,
    type,
    version: snapshot.typeVersions[type],
  }));
}

function pending(stream: number, type: ResourceType): AdsStreamEvent {
  return { kind: 'pending', stream, nodeId: `envoy-${stream}`, type };
}

function feed(retirement: Retirement, events: readonly AdsStreamEvent[]): void {
  for (const event of events) retirement.observe(event);
}

const clusterNames = (snapshot: Snapshot): string[] => [...snapshot.resources[CLUSTER_TYPE].keys()];
const endpointNames = (snapshot: Snapshot): string[] => [
  ...snapshot.resources[CLUSTER_LOAD_ASSIGNMENT_TYPE].keys(),
];

const first = snap(['a', 'b'], 'b');
const moved = snap(['a'], 'a');

test('no Envoy connected: every build is served as it is, at once', () => {
  const retirement = new Retirement();
  assert.deepEqual(retirement.build(first), { serve: first, settled: true });
  assert.deepEqual(retirement.build(moved), { serve: moved, settled: true });
  assert.equal(retirement.waiting, false);
});

test('one stream: the dropped cluster stays until its Envoy ACKed the new routes, then goes', () => {
  const retirement = new Retirement();
  retirement.build(first);
  feed(retirement, acked(1, first));
  const step = retirement.build(moved);
  assert.equal(step.settled, false);
  assert.deepEqual(clusterNames(step.serve), ['a', 'b'], 'b retires: still served');
  assert.deepEqual(endpointNames(step.serve), ['a', 'b']);
  assert.equal(
    step.serve.typeVersions[ROUTE_CONFIGURATION_TYPE],
    moved.typeVersions[ROUTE_CONFIGURATION_TYPE],
  );
  assert.equal(step.serve.typeVersions[LISTENER_TYPE], moved.typeVersions[LISTENER_TYPE]);
  assert.deepEqual(retirement.retiringNames(), { clusters: ['b'], endpoints: ['b'] });
  // The stream is sent the new routes (pending), ACKs CDS and EDS first: not yet.
  retirement.observe(pending(1, ROUTE_CONFIGURATION_TYPE));
  feed(retirement, acked(1, step.serve, [CLUSTER_TYPE, CLUSTER_LOAD_ASSIGNMENT_TYPE, LISTENER_TYPE]));
  assert.equal(retirement.settle(), undefined, 'routes not ACKed yet');
  assert.deepEqual(retirement.lagging(), [1]);
  feed(retirement, acked(1, step.serve, [ROUTE_CONFIGURATION_TYPE]));
  const after = retirement.settle()?.serve;
  assert.equal(after, moved, 'the build itself, as a restart would serve it');
  assert.equal(retirement.waiting, false);
  assert.deepEqual(retirement.retiringNames(), { clusters: [], endpoints: [] });
  assert.equal(retirement.settle(), undefined, 'ends once');
});

test('two streams, one slow: the cluster goes only when the slow one ACKs too', () => {
  const retirement = new Retirement();
  retirement.build(first);
  feed(retirement, [...acked(1, first), ...acked(2, first)]);
  const { serve } = retirement.build(moved);
  feed(retirement, acked(1, serve));
  assert.equal(retirement.settle(), undefined);
  assert.deepEqual(retirement.lagging(), [2]);
  feed(retirement, acked(2, serve));
  assert.deepEqual(retirement.settle(), { serve: moved, settled: true });
});

test('a NACKing stream keeps the cluster (its Envoy still routes to it)', () => {
  const retirement = new Retirement();
  retirement.build(first);
  feed(retirement, acked(1, first));
  retirement.build(moved);
  retirement.observe(pending(1, ROUTE_CONFIGURATION_TYPE));
  assert.equal(retirement.settle(), undefined);
  assert.ok(retirement.waiting);
});

test('a stream that disconnects no longer holds the retirement back', () => {
  const retirement = new Retirement();
  retirement.build(first);
  feed(retirement, [...acked(1, first), ...acked(2, first)]);
  const { serve } = retirement.build(moved);
  feed(retirement, acked(1, serve));
  retirement.observe({ kind: 'closed', stream: 2, nodeId: 'envoy-2' });
  assert.deepEqual(retirement.settle(), { serve: moved, settled: true });
});

test('a stream that never asked for routes does not hold the retirement back', () => {
  const retirement = new Retirement();
  retirement.build(first);
  feed(retirement, acked(1, first, [CLUSTER_TYPE]));
  assert.deepEqual(retirement.build(moved), { serve: moved, settled: true });
});

test('a build that changes no route is served at once, clusters and all', () => {
  const retirement = new Retirement();
  const three = snap(['a', 'b', 'c'], 'b');
  retirement.build(three);
  feed(retirement, acked(1, three));
  const step = retirement.build(first);
  assert.deepEqual(step, { serve: first, settled: true }, 'c was referred to by no route');
});

test('overlapping builds merge what retires and wait for the newest routes', () => {
  const retirement = new Retirement();
  const abc = snap(['a', 'b', 'c'], 'c');
  const ab = snap(['a', 'b'], 'b');
  const a = snap(['a'], 'a');
  retirement.build(abc);
  feed(retirement, acked(1, abc));
  const second = retirement.build(ab);
  assert.deepEqual(clusterNames(second.serve), ['a', 'b', 'c']);
  const third = retirement.build(a);
  assert.equal(third.settled, false);
  assert.deepEqual(clusterNames(third.serve), ['a', 'b', 'c'], 'c still retiring, b joins it');
  assert.deepEqual(retirement.retiringNames().clusters, ['b', 'c']);
  feed(retirement, acked(1, second.serve));
  assert.equal(retirement.settle(), undefined, "the second build's routes are not the newest");
  feed(retirement, acked(1, third.serve));
  assert.deepEqual(retirement.settle(), { serve: a, settled: true });
});

test('a retiring cluster that a newer build brings back is served as the newer build has it', () => {
  const retirement = new Retirement();
  retirement.build(first);
  feed(retirement, acked(1, first));
  retirement.build(moved);
  const back = snap(['a', 'b'], 'b', { b: cluster('b', { connect_timeout: { seconds: 3 } }) });
  const step = retirement.build(back);
  assert.deepEqual(retirement.retiringNames().clusters, []);
  assert.equal(
    step.serve.resources[CLUSTER_TYPE].get('b')?.version,
    back.resources[CLUSTER_TYPE].get('b')?.version,
  );
  assert.equal(step.serve, back);
});

test('the retiring snapshot is a function of its inputs: same build and history, same versions', () => {
  const run = (): Snapshot => {
    const retirement = new Retirement();
    retirement.build(first);
    feed(retirement, acked(1, first));
    return retirement.build(moved).serve;
  };
  const [one, two] = [run(), run()];
  assert.equal(one.version, two.version);
  assert.notEqual(one.version, moved.version);
  assert.deepEqual(one.typeVersions, two.typeVersions);
});

test('a build that adds a cluster sends it (with the old routes) first, the routes once every Envoy has it', () => {
  const retirement = new Retirement();
  const onlyA = snap(['a'], 'a');
  const toB = snap(['a', 'b'], 'b');
  retirement.build(onlyA);
  feed(retirement, [...acked(1, onlyA), ...acked(2, onlyA)]);
  const adding = retirement.build(toB);
  assert.equal(adding.settled, false);
  assert.deepEqual(clusterNames(adding.serve), ['a', 'b']);
  assert.equal(adding.serve.typeVersions[CLUSTER_TYPE], toB.typeVersions[CLUSTER_TYPE]);
  assert.equal(
    adding.serve.typeVersions[ROUTE_CONFIGURATION_TYPE],
    onlyA.typeVersions[ROUTE_CONFIGURATION_TYPE],
    'routes still those Envoy has',
  );
  feed(retirement, acked(1, adding.serve));
  feed(retirement, acked(2, adding.serve, [CLUSTER_TYPE]));
  retirement.observe(pending(2, CLUSTER_LOAD_ASSIGNMENT_TYPE));
  assert.equal(retirement.settle(), undefined, 'stream 2 has not ACKed the endpoints');
  assert.deepEqual(retirement.lagging(), [2]);
  feed(retirement, acked(2, adding.serve, [CLUSTER_LOAD_ASSIGNMENT_TYPE]));
  const switching = retirement.settle();
  assert.deepEqual(switching, { serve: toB, settled: false }, 'now the routes; nothing retires');
  assert.equal(retirement.settle(), undefined);
  feed(retirement, [...acked(1, toB), ...acked(2, toB)]);
  assert.deepEqual(retirement.settle(), { serve: toB, settled: true });
});

test('a re-matched route: new cluster first, then new routes with the old cluster, then the build', () => {
  const retirement = new Retirement();
  const old = snap(['a', 'b1'], 'b1');
  const next = snap(['a', 'b2'], 'b2');
  retirement.build(old);
  feed(retirement, acked(1, old));
  const adding = retirement.build(next);
  assert.deepEqual(clusterNames(adding.serve), ['a', 'b1', 'b2']);
  assert.equal(
    adding.serve.typeVersions[ROUTE_CONFIGURATION_TYPE],
    old.typeVersions[ROUTE_CONFIGURATION_TYPE],
  );
  assert.deepEqual(retirement.retiringNames().clusters, ['b1']);
  feed(retirement, acked(1, adding.serve));
  const switching = retirement.settle();
  assert.ok(switching !== undefined && !switching.settled);
  assert.deepEqual(clusterNames(switching.serve), ['a', 'b1', 'b2']);
  assert.equal(
    switching.serve.typeVersions[ROUTE_CONFIGURATION_TYPE],
    next.typeVersions[ROUTE_CONFIGURATION_TYPE],
  );
  assert.equal(
    switching.serve.typeVersions[CLUSTER_TYPE],
    adding.serve.typeVersions[CLUSTER_TYPE],
    'no CDS push',
  );
  feed(retirement, acked(1, switching.serve));
  assert.deepEqual(retirement.settle(), { serve: next, settled: true });
});

test('a build during the adding step starts over from what is served and keeps every cluster', () => {
  const retirement = new Retirement();
  const old = snap(['a', 'b1'], 'b1');
  retirement.build(old);
  feed(retirement, acked(1, old));
  retirement.build(snap(['a', 'b2'], 'b2'));
  const third = snap(['a', 'b3'], 'b3');
  const adding = retirement.build(third);
  assert.deepEqual(clusterNames(adding.serve), ['a', 'b1', 'b2', 'b3']);
  assert.equal(
    adding.serve.typeVersions[ROUTE_CONFIGURATION_TYPE],
    old.typeVersions[ROUTE_CONFIGURATION_TYPE],
  );
  feed(retirement, acked(1, adding.serve));
  const switching = retirement.settle();
  feed(retirement, acked(1, switching?.serve as Snapshot));
  assert.deepEqual(retirement.settle(), { serve: third, settled: true });
});

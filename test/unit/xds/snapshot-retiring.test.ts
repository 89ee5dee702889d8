// The pure snapshot steps of make-before-break: what retires, the snapshot that keeps it, and the
// one that adds clusters under the old routes. Each is versioned exactly as a snapshot built from
// scratch with the same resources would be (a reconnecting Envoy sees no churn).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CLUSTER_LOAD_ASSIGNMENT_TYPE, CLUSTER_TYPE } from '../../../src/proto/type-urls.js';
import { addsClusters, retiredBy, withClustersOf, withRetiring } from '../../../src/xds/snapshot/retiring.js';
import { cluster, routedSnapshot } from './server/helpers.js';

const snap = routedSnapshot;

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

test('a type whose resources are the same map (or version) retires and adds nothing, without a walk', () => {
  const served = snap(['a', 'b'], 'a');
  const next = { ...snap(['a'], 'a'), resources: { ...snap(['a'], 'a').resources } };
  // Same map object for the retiring types: what `served` has is what `next` has.
  const sameMaps = {
    ...next,
    resources: {
      ...next.resources,
      [CLUSTER_TYPE]: served.resources[CLUSTER_TYPE],
      [CLUSTER_LOAD_ASSIGNMENT_TYPE]: served.resources[CLUSTER_LOAD_ASSIGNMENT_TYPE],
    },
    typeVersions: {
      ...next.typeVersions,
      [CLUSTER_TYPE]: served.typeVersions[CLUSTER_TYPE],
      [CLUSTER_LOAD_ASSIGNMENT_TYPE]: served.typeVersions[CLUSTER_LOAD_ASSIGNMENT_TYPE],
    },
  };
  assert.equal(retiredBy(served, sameMaps)[CLUSTER_TYPE].size, 0);
  assert.equal(addsClusters(served, sameMaps), false);
  // Different maps: the walk finds what retires and what is added, as before.
  assert.deepEqual([...retiredBy(served, next)[CLUSTER_TYPE].keys()], ['b']);
  assert.equal(addsClusters(next, served), true);
});

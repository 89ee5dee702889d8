// The prepared view of a snapshot the ADS streams share: a type the new snapshot left alone (the
// same resource map, at the same version) is the previous view's prepared type as it is, so a
// build costs the streams only the types it changed; a changed type is prepared afresh.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CLUSTER_TYPE, LISTENER_TYPE } from '../../../../src/proto/type-urls.js';
import { prepare } from '../../../../src/xds/server/prepared.js';
import { routedSnapshot } from './helpers.js';

test('prepare reuses the previous view for unchanged types and prepares changed ones', () => {
  const first = routedSnapshot(['a', 'b'], 'a');
  const other = routedSnapshot(['a', 'b', 'c'], 'c');
  const view = prepare(first);
  const clusters = view.type(CLUSTER_TYPE);
  view.type(LISTENER_TYPE);
  // Clusters changed, listeners kept (the same map, as the delta path hands them over).
  const next = {
    ...other,
    resources: { ...other.resources, [LISTENER_TYPE]: first.resources[LISTENER_TYPE] },
    typeVersions: { ...other.typeVersions, [LISTENER_TYPE]: first.typeVersions[LISTENER_TYPE] },
  };
  const nextView = prepare(next, view);
  assert.equal(nextView.type(LISTENER_TYPE), view.type(LISTENER_TYPE), 'kept type: the same prepared type');
  assert.notEqual(nextView.type(CLUSTER_TYPE), clusters, 'changed type: prepared afresh');
  assert.deepEqual(
    nextView.type(CLUSTER_TYPE).list.map((r) => r.name),
    [...next.resources[CLUSTER_TYPE].keys()],
  );
  assert.equal(nextView.prepared(CLUSTER_TYPE), nextView.type(CLUSTER_TYPE));
  const unasked = prepare(first);
  assert.equal(unasked.prepared(CLUSTER_TYPE), undefined, 'asking prepared() prepares nothing');
  assert.equal(prepare(first, unasked).prepared(CLUSTER_TYPE), undefined, 'nothing to take over');
});

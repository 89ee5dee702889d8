// Leader election's decision: create, renew, take an empty or expired Lease, wait while the
// holder's record keeps changing; expiry on this replica's clock, never the holder's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { leaseAction } from '../../../src/kubernetes/lease-decision.js';

test('no Lease: create it; ours: renew; released (no holder): take it', () => {
  assert.deepEqual(leaseAction(undefined, 'a', undefined, 0).action, { kind: 'create' });
  assert.deepEqual(leaseAction({ holderIdentity: 'a', leaseDurationSeconds: 3 }, 'a', undefined, 0).action, {
    kind: 'renew',
  });
  assert.deepEqual(leaseAction({ holderIdentity: '', leaseDurationSeconds: 1 }, 'a', undefined, 0).action, {
    kind: 'take',
    from: '',
  });
});

test('held by another: wait while its record changes; take it once unchanged for the duration', () => {
  const held = (renewTime: string) => ({ holderIdentity: 'b', leaseDurationSeconds: 3, renewTime });
  let step = leaseAction(held('t1'), 'a', undefined, 1000);
  assert.deepEqual(step.action, { kind: 'wait', holder: 'b' });
  step = leaseAction(held('t1'), 'a', step.observed, 3999);
  assert.equal(step.action.kind, 'wait', 'not yet a whole duration unchanged');
  step = leaseAction(held('t2'), 'a', step.observed, 3999);
  assert.equal(step.action.kind, 'wait', 'renewed: the clock starts again');
  step = leaseAction(held('t2'), 'a', step.observed, 6998);
  assert.equal(step.action.kind, 'wait');
  step = leaseAction(held('t2'), 'a', step.observed, 6999);
  assert.deepEqual(step.action, { kind: 'take', from: 'b' });
});

test("a renewTime far in the past on the holder's clock does not make a live holder expired", () => {
  const step = leaseAction(
    { holderIdentity: 'b', leaseDurationSeconds: 3, renewTime: '2000-01-01T00:00:00.000000Z' },
    'a',
    undefined,
    1_000_000,
  );
  assert.equal(step.action.kind, 'wait');
});

// The revocation set of the fast path (authorize/revocations.ts): entries live one hold, the set
// is sorted, a repeat is no change, and overflowing it is reported (so the fast path turns off)
// instead of forgetting a revocation; all on a fake clock.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Revocations } from '../../../src/authorize/revocations.js';

function clocked(maxEntries = 100): { set: Revocations; advance(ms: number): void } {
  let now = 1_000_000;
  return {
    set: new Revocations({ holdMs: 125_000, maxEntries, now: () => now }),
    advance: (ms) => {
      now += ms;
    },
  };
}

test('a revoked session stays one hold, then goes; the set is sorted and a repeat changes nothing', () => {
  const { set, advance } = clocked();
  assert.equal(set.revoke('s-b'), true);
  advance(1000);
  assert.equal(set.revoke('s-a'), true);
  assert.equal(set.revoke('s-b'), false, 'already there');
  assert.deepEqual(set.ids(), ['s-a', 's-b']);
  advance(124_000);
  assert.equal(set.prune(), true, 's-b is one hold old');
  assert.deepEqual(set.ids(), ['s-a']);
  assert.equal(set.prune(), false);
  advance(1000);
  assert.equal(set.prune(), true);
  assert.deepEqual(set.ids(), []);
});

test('more revocations within one hold than it keeps: overflowed until they age out, none forgotten', () => {
  const { set, advance } = clocked(2);
  set.revoke('s-1');
  set.revoke('s-2');
  assert.equal(set.overflowed(), false);
  assert.equal(set.revoke('s-3'), true, 'the overflow is a change');
  assert.equal(set.overflowed(), true);
  assert.equal(set.revoke('s-4'), false, 'still overflowed');
  assert.deepEqual(set.ids(), ['s-1', 's-2'], 'the kept entries stay');
  advance(125_000);
  assert.equal(set.prune(), true);
  assert.equal(set.overflowed(), false, 'every token of s-3 and s-4 has expired by now');
  assert.deepEqual(set.ids(), []);
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sortedChanges } from '../../../src/shared/sorted-changes.js';

type Item = { readonly name: string; readonly v: number };
const item = (name: string, v = 0): Item => ({ name, v });
const sameValue = (old: Item, now: Item): boolean => old.v === now.v;

describe('sortedChanges', () => {
  const before = ['a', 'b', 'c', 'd', 'e'].map((name) => item(name));

  it('finds what left, arrived and changed, keeping unchanged objects out', () => {
    const after = [before[0]!, item('b', 1), item('bb'), before[3]!, item('e')];
    const changes = sortedChanges(before, after, sameValue);
    assert.deepEqual(
      changes?.removed.map((x) => x.name),
      ['b', 'c'],
    );
    assert.deepEqual(
      changes?.added.map((x) => x.name),
      ['b', 'bb'],
    );
  });

  it('is undefined when the new list is out of order', () => {
    assert.equal(sortedChanges(before, [item('b'), item('a')], sameValue), undefined);
  });

  it('is undefined once more than `limit` items changed, counting trailing removals', () => {
    const after = [before[0]!, item('b', 1), item('bb'), before[3]!, item('e')];
    // Four changes in all (b out and in, c out, bb in).
    assert.notEqual(sortedChanges(before, after, sameValue, 4), undefined);
    assert.equal(sortedChanges(before, after, sameValue, 3), undefined);
    // Only removals at the end: a, b kept; c, d, e left.
    assert.notEqual(sortedChanges(before, before.slice(0, 2), sameValue, 3), undefined);
    assert.equal(sortedChanges(before, before.slice(0, 2), sameValue, 2), undefined);
  });
});

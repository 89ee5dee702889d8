import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IdentityMemo } from '../../../src/shared/identity-memo.js';

test('IdentityMemo computes once per key object and context, and a new context forgets every entry', () => {
  const memo = new IdentityMemo<object, string>();
  const a = {};
  const b = {};
  let made = 0;
  const make = (label: string) => (): string => {
    made += 1;
    return label;
  };
  assert.equal(memo.get(a, 'ctx1', make('a1')), 'a1');
  assert.equal(memo.get(a, 'ctx1', make('again')), 'a1', 'same key and context: remembered');
  assert.equal(memo.get(b, 'ctx1', make('b1')), 'b1');
  assert.equal(made, 2);
  assert.equal(memo.lookup({}, 'ctx1'), undefined, 'keyed by identity, not by content');
  assert.equal(memo.lookup(a, 'ctx2'), undefined, 'another context is a miss');
  assert.equal(memo.get(a, 'ctx2', make('a2')), 'a2', 'recomputed under the new context');
  assert.equal(memo.lookup(b, 'ctx2'), undefined, 'b was made under ctx1: forgotten');
  assert.equal(memo.lookup(b, 'ctx1'), undefined, 'the old context is gone entirely');
  memo.remember(b, 'ctx2', 'b2');
  assert.equal(memo.lookup(b, 'ctx2'), 'b2');
  assert.equal(made, 3);
});

// The memory replay guard: once per id until expiry, expired entries dropped, bounded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryReplayGuard } from '../../../../src/authenticate/flow/replay-guard.js';

test('an id is accepted once until it expires', () => {
  let now = 1000;
  const guard = new MemoryReplayGuard(() => now);
  assert.equal(guard.claim('a', 2000), true);
  assert.equal(guard.claim('a', 2000), false, 'a replay');
  assert.equal(guard.claim('b', 2000), true, 'another id');
  now = 2000;
  assert.equal(guard.size, 0, 'expired entries are dropped');
  assert.equal(guard.claim('a', 1500), false, 'an already expired id is never accepted');
});

test('expired entries are dropped on later claims', () => {
  let now = 0;
  const guard = new MemoryReplayGuard(() => now);
  for (let i = 0; i < 50; i += 1) guard.claim(`id-${i}`, 100);
  now = 100;
  guard.claim('fresh', 200);
  assert.equal(guard.size, 1);
});

test('the guard never holds more than its bound', () => {
  const guard = new MemoryReplayGuard(() => 0, 10);
  for (let i = 0; i < 100; i += 1) assert.equal(guard.claim(`id-${i}`, 1000), true);
  assert.equal(guard.size, 10);
  assert.equal(guard.claim('id-99', 1000), false, 'recent ids are still remembered');
});

// The record-store replay guard: once per id across every instance sharing a store, until expiry;
// a store that cannot be reached rejects (never a claim).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RecordReplayGuard } from '../../../../src/authenticate/flow/replay-guard.js';
import { MemoryBackend } from '../../../../src/databroker/memory-backend.js';
import { RECORD_TYPES, StoreUnavailableError } from '../../../../src/session/records.js';
import { unreachableBackend } from '../failing-store.js';

test('two instances over one store: an id claimed at one is refused at the other', async () => {
  let now = 1_000;
  const backend = new MemoryBackend({ now: () => now });
  const first = new RecordReplayGuard(backend, () => now);
  const second = new RecordReplayGuard(backend, () => now);
  assert.equal(await first.claim('sign-in:flow-1', 61_000), true);
  assert.equal(await second.claim('sign-in:flow-1', 61_000), false, 'replayed at another instance');
  assert.equal(await first.claim('sign-in:flow-1', 61_000), false, 'replayed at the same instance');
  assert.equal(await second.claim('handoff:flow-1', 61_000), true, 'another id');
  now = 61_000;
  assert.equal(await first.claim('sign-in:late', 61_000), false, 'an expired id is never accepted');
  assert.equal((await backend.query(RECORD_TYPES.used)).length, 0, 'claims expire with their id');
});

test('concurrent claims of one id: exactly one wins', async () => {
  const backend = new MemoryBackend({ now: () => 0 });
  const guards = Array.from({ length: 8 }, () => new RecordReplayGuard(backend, () => 0));
  const results = await Promise.all(guards.map((guard) => guard.claim('handoff:x', 60_000)));
  assert.equal(results.filter(Boolean).length, 1);
});

test('ids of any length and charset are hashed into the record id', async () => {
  const backend = new MemoryBackend({ now: () => 0 });
  const guard = new RecordReplayGuard(backend, () => 0);
  const long = `sign-in:${'\u00e9\n'.repeat(500)}`;
  assert.equal(await guard.claim(long, 10_000), true);
  const [record] = await backend.query(RECORD_TYPES.used);
  assert.match(record?.id ?? '', /^[\w-]{43}$/, 'a SHA-256 base64url id');
  assert.equal(await guard.claim(long, 10_000), false);
});

test('a store that cannot be reached rejects with StoreUnavailableError', async () => {
  const guard = new RecordReplayGuard(unreachableBackend(), () => 0);
  await assert.rejects(guard.claim('sign-in:a', 10_000), StoreUnavailableError);
});

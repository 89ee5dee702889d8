// The in-memory record backend: versions, expiry (and the sweep that keeps memory bounded), ifVersion,
// the change feed's order, leases, close. The shared conformance suite covers the contract at large.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryBackend } from '../../../src/databroker/memory-backend.js';
import {
  RecordConflictError,
  StoreUnavailableError,
  type RecordChange,
} from '../../../src/session/records.js';

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function fakeClock(start = 1_000_000): { now: number; fn: () => number } {
  const clock = { now: start, fn: () => clock.now };
  return clock;
}

test('versions grow store-wide with every write; get returns what put stored', async () => {
  const backend = new MemoryBackend();
  const a = await backend.put('t', 'a', 'one');
  const b = await backend.put('u', 'b', 'two');
  const a2 = await backend.put('t', 'a', 'three');
  assert.ok(a.version > 0 && b.version > a.version && a2.version > b.version);
  assert.deepEqual(await backend.get('t', 'a'), a2);
  assert.equal(await backend.get('t', 'b'), undefined, 'types are separate');
  assert.equal(await backend.delete('t', 'a'), true);
  assert.equal(await backend.delete('t', 'a'), false);
  assert.equal(await backend.get('t', 'a'), undefined);
});

test('a record with a TTL is gone from get and query once it expires', async () => {
  const clock = fakeClock();
  const backend = new MemoryBackend({ now: clock.fn });
  const stored = await backend.put('t', 'a', 'x', { ttlMs: 1000 });
  await backend.put('t', 'b', 'y');
  assert.equal(stored.expiresAt, clock.now + 1000);
  clock.now += 999;
  assert.equal((await backend.get('t', 'a'))?.data, 'x');
  clock.now += 1;
  assert.equal(await backend.get('t', 'a'), undefined);
  assert.deepEqual(
    (await backend.query('t')).map((r) => r.id),
    ['b'],
  );
});

test('expired records are swept on writes, so memory follows the live records', async () => {
  const clock = fakeClock();
  const backend = new MemoryBackend({ now: clock.fn });
  for (let i = 0; i < 5000; i++) await backend.put('t', `old-${i}`, 'x', { ttlMs: 10 });
  clock.now += 10;
  for (let i = 0; i < 5000; i++) await backend.put('t', `new-${i}`, 'x', { ttlMs: 10 });
  // 5,000 expired + 5,000 live at most; a sweep ran once the writes since the last reached the size.
  assert.ok(backend.size <= 5000 + 1024, `held ${backend.size} records`);
  clock.now += 10;
  for (let i = 0; i < 20_000; i++) await backend.put('t', `k-${i % 100}`, 'x', { ttlMs: 10 });
  assert.ok(backend.size <= 100 + 1024, `held ${backend.size} records after the churn`);
});

test('ifVersion writes only over the named version; 0 means only when absent', async () => {
  const backend = new MemoryBackend();
  const first = await backend.put('used-once', 'state', 'x', { ifVersion: 0 });
  await assert.rejects(backend.put('used-once', 'state', 'y', { ifVersion: 0 }), RecordConflictError);
  await assert.rejects(
    backend.put('used-once', 'state', 'y', { ifVersion: first.version + 7 }),
    RecordConflictError,
  );
  assert.equal((await backend.get('used-once', 'state'))?.data, 'x', 'a conflict wrote nothing');
  const second = await backend.put('used-once', 'state', 'z', { ifVersion: first.version });
  assert.equal((await backend.get('used-once', 'state'))?.version, second.version);
});

test('the change feed reports every put and delete, in commit order, after the commit', async () => {
  const backend = new MemoryBackend();
  const seen: RecordChange[] = [];
  const unwatch = backend.watch((change) => seen.push(change));
  const a = await backend.put('t', 'a', '1');
  const b = await backend.put('t', 'b', '2');
  await backend.delete('t', 'a');
  await backend.delete('t', 'nothing');
  await flush();
  assert.deepEqual(
    seen.map((c) => (c.kind === 'put' || c.kind === 'delete' ? `${c.kind} ${c.id}` : c.kind)),
    ['put a', 'put b', 'delete a'],
  );
  const [putA, putB, deleteA] = seen;
  assert.ok(putA?.kind === 'put' && putA.version === a.version);
  assert.ok(putB?.kind === 'put' && putB.version === b.version);
  assert.ok(deleteA?.kind === 'delete' && deleteA.version > b.version);
  unwatch();
  await backend.put('t', 'c', '3');
  await flush();
  assert.equal(seen.length, 3, 'an unsubscribed watcher heard a change');
});

test('a lease has one holder until released or expired; a stale token releases nothing', async () => {
  const clock = fakeClock();
  const backend = new MemoryBackend({ now: clock.fn });
  const token = await backend.acquireLease('refresh/s1', 1000);
  assert.ok(token !== undefined);
  assert.equal(await backend.acquireLease('refresh/s1', 1000), undefined);
  await backend.releaseLease('refresh/s1', token);
  const second = await backend.acquireLease('refresh/s1', 1000);
  assert.ok(second !== undefined && second !== token);
  clock.now += 1000;
  const third = await backend.acquireLease('refresh/s1', 1000);
  assert.ok(third !== undefined, 'an expired lease still blocked');
  await backend.releaseLease('refresh/s1', second);
  assert.equal(
    await backend.acquireLease('refresh/s1', 1000),
    undefined,
    'the old holder released the new lease',
  );
});

test('after close every call rejects with StoreUnavailableError', async () => {
  const backend = new MemoryBackend();
  await backend.put('t', 'a', 'x');
  await backend.close();
  await assert.rejects(backend.get('t', 'a'), StoreUnavailableError);
  await assert.rejects(backend.put('t', 'a', 'x'), StoreUnavailableError);
  await assert.rejects(backend.ping(), StoreUnavailableError);
});

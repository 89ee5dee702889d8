// The session store over sealed records: the cache (hits, misses, LRU bound, expiry), the change
// feed keeping it exact across instances (two stores on one backend = two Portcullis instances),
// the outage grace while the feed is lost, the drop on `resumed`, and records that do not open.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryBackend } from '../../../src/databroker/memory-backend.js';
import { RecordSessionStore } from '../../../src/databroker/record-session-store.js';
import { SealedRecords } from '../../../src/databroker/sealed-records.js';
import { RECORD_TYPES, StoreUnavailableError, type RecordBackend } from '../../../src/session/records.js';
import type { Session } from '../../../src/session/session.js';
import { recordingLogger, silentLogger, type Logger } from '../../../src/shared/logger.js';
import { ControlledBackend } from './controlled-backend.js';

const SECRET = new Uint8Array(32).fill(3);
const GRACE = 10_000;

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

interface Rig {
  readonly clock: { now: number };
  readonly memory: MemoryBackend;
  readonly backend: ControlledBackend;
  /** A store (a Portcullis instance) on the rig's backend. */
  instance(options?: { maxCached?: number; logger?: Logger }): RecordSessionStore;
}

function rig(): Rig {
  const clock = { now: 1_000_000 };
  const now = (): number => clock.now;
  const memory = new MemoryBackend({ now });
  const backend = new ControlledBackend(memory);
  return {
    clock,
    memory,
    backend,
    instance: (options = {}) => storeOn(backend, now, options),
  };
}

function storeOn(
  backend: RecordBackend,
  now: () => number,
  options: { maxCached?: number; logger?: Logger },
): RecordSessionStore {
  const logger = options.logger ?? silentLogger;
  return new RecordSessionStore(new SealedRecords(backend, { secret: () => SECRET, logger }), {
    outageGraceMs: GRACE,
    now,
    logger,
    ...(options.maxCached === undefined ? {} : { maxCached: options.maxCached }),
  });
}

function session(id: string, now: number, overrides: Partial<Session> = {}): Session {
  return {
    id,
    userId: `user-${id}`,
    email: undefined,
    emailVerified: false,
    name: 'Ada',
    groups: ['eng'],
    claims: { department: 'research' },
    issuedAt: now,
    expiresAt: now + 3_600_000,
    idpId: 'idp-1',
    ...overrides,
  };
}

function invalidations(store: RecordSessionStore): string[] {
  const ids: string[] = [];
  store.onInvalidate((id) => ids.push(id));
  return ids;
}

test('put caches: getSync answers at once; another instance misses, reads the store, then caches', async () => {
  const { clock, instance } = rig();
  const a = instance();
  const b = instance();
  const ada = session('s1', clock.now);
  await a.put(ada);
  assert.equal(a.getSync('s1'), ada, 'not a cache hit');
  assert.equal(b.getSync('s1'), undefined, 'an instance that never read it answered synchronously');
  assert.deepEqual(await b.get('s1'), ada);
  assert.deepEqual(b.getSync('s1'), ada);
  assert.equal(await b.get('nobody'), undefined);
});

test('a delete or replacement in one instance drops the session in the other and notifies its listeners', async () => {
  const { clock, instance } = rig();
  const a = instance();
  const b = instance();
  const seenByA = invalidations(a);
  await a.put(session('s1', clock.now));
  await b.get('s1');
  await flush();
  seenByA.length = 0;
  const seenByB = invalidations(b);

  await a.put(session('s1', clock.now, { groups: ['admins'] }));
  await flush();
  assert.deepEqual(seenByB, ['s1']);
  assert.equal(b.getSync('s1'), undefined, 'the replaced session stayed cached');
  assert.deepEqual((await b.get('s1'))?.groups, ['admins']);

  await b.delete('s1');
  await flush();
  assert.ok(seenByA.includes('s1'), 'the sign-out was not notified in the other instance');
  assert.equal(a.getSync('s1'), undefined, 'the signed-out session is still served');
  assert.equal(await a.get('s1'), undefined);
});

test('an instance’s own write is notified once and stays cached (its feed report is ignored)', async () => {
  const { clock, instance } = rig();
  const a = instance();
  const seen = invalidations(a);
  const ada = session('s1', clock.now);
  await a.put(ada);
  await a.put({ ...ada, name: 'Ada L.' });
  await flush();
  assert.deepEqual(seen, ['s1', 's1']);
  assert.equal(a.getSync('s1')?.name, 'Ada L.');
});

test('a read in flight while another instance deletes the session does not cache what it read', async () => {
  const { clock, backend, instance } = rig();
  const a = instance();
  const b = instance();
  await a.put(session('s1', clock.now));
  backend.hold();
  const reading = b.get('s1');
  await a.delete('s1');
  await flush();
  backend.release();
  await reading;
  assert.equal(b.getSync('s1'), undefined, 'the read cached a deleted session');
  assert.equal(await b.get('s1'), undefined);
});

test('concurrent misses of one session share one store read; a change in between starts a new one', async () => {
  const { clock, backend, instance } = rig();
  const a = instance();
  const b = instance();
  await a.put(session('s1', clock.now));
  backend.hold();
  const before = backend.reads;
  const first = [b.get('s1'), b.get('s1'), b.get('s1')];
  assert.equal(backend.reads - before, 1, 'each miss read the store');
  await a.put(session('s1', clock.now, { name: 'Changed' }));
  await flush();
  const after = b.get('s1');
  assert.equal(backend.reads - before, 2, 'a read that started before the change was shared after it');
  backend.release();
  assert.deepEqual(
    (await Promise.all(first)).map((s) => s?.name),
    ['Ada', 'Ada', 'Ada'],
  );
  assert.equal((await after)?.name, 'Changed');
  assert.equal(b.getSync('s1')?.name, 'Changed');
});

test('expired sessions are never returned, and an already-expired put stores nothing', async () => {
  const { clock, memory, instance } = rig();
  const a = instance();
  const b = instance();
  await a.put(session('s1', clock.now, { expiresAt: clock.now + 1000 }));
  await b.get('s1');
  clock.now += 1000;
  assert.equal(a.getSync('s1'), undefined);
  assert.equal(await a.get('s1'), undefined);
  assert.equal(await b.get('s1'), undefined);
  await a.put(session('s2', clock.now, { expiresAt: clock.now - 1 }));
  assert.equal(await b.get('s2'), undefined);
  assert.equal((await memory.query(RECORD_TYPES.session)).length, 0);
});

test('the cache holds at most maxCached sessions, dropping the least recently used', async () => {
  const { clock, instance } = rig();
  const a = instance({ maxCached: 2 });
  await a.put(session('s1', clock.now));
  await a.put(session('s2', clock.now));
  assert.ok(a.getSync('s1') !== undefined);
  await a.put(session('s3', clock.now));
  assert.equal(a.cachedCount, 2);
  assert.equal(a.getSync('s2'), undefined, 's2 was the least recently used');
  assert.ok(a.getSync('s1') !== undefined && a.getSync('s3') !== undefined);
  assert.equal((await a.get('s2'))?.id, 's2', 'an evicted session is read from the store');
});

test('feed lost: cached sessions serve for the grace, then get fails with StoreUnavailableError', async () => {
  const { clock, backend, instance } = rig();
  const a = instance();
  await a.put(session('old', clock.now));
  clock.now += 5000;
  backend.emit({ kind: 'lost' });
  const lostAt = clock.now;
  // Read after the loss (the store still answered): its grace runs from when it was fetched.
  clock.now += 4000;
  await a.put(session('fresh', clock.now));
  backend.down = true;
  clock.now = lostAt + GRACE - 1;
  assert.ok(a.getSync('old') !== undefined);
  assert.ok((await a.get('old')) !== undefined);
  clock.now = lostAt + GRACE;
  assert.equal(a.getSync('old'), undefined, 'served past the grace');
  await assert.rejects(a.get('old'), StoreUnavailableError);
  assert.ok(a.getSync('fresh') !== undefined, 'fetched 4 s after the loss: 4 s of grace left');
  clock.now = lostAt + 4000 + GRACE;
  assert.equal(a.getSync('fresh'), undefined);
  await assert.rejects(a.get('never-cached'), StoreUnavailableError, 'a store error read as "no session"');
  await assert.rejects(a.put(session('new', clock.now)), StoreUnavailableError);
});

test('feed resumed: every cached session is dropped and notified, then read again from the store', async () => {
  const { clock, backend, instance } = rig();
  const a = instance();
  await a.put(session('s1', clock.now));
  await a.put(session('s2', clock.now));
  await flush();
  const seen = invalidations(a);
  backend.emit({ kind: 'lost' });
  backend.emit({ kind: 'resumed' });
  assert.deepEqual(seen.sort(), ['s1', 's2']);
  assert.equal(a.getSync('s1'), undefined);
  assert.equal((await a.get('s1'))?.id, 's1');
  clock.now += GRACE * 2;
  assert.ok(a.getSync('s1') !== undefined, 'the grace still applied after resumed');
});

test('a record that does not open is an absent session, logged once; raw values reveal nothing', async () => {
  const { clock, memory, instance } = rig();
  const logger = recordingLogger();
  const a = instance({ logger });
  await a.put(
    session('s1', clock.now, {
      userId: 'user-7c1d',
      email: 'grace.hopper@example.com',
      claims: { department: 'cobol-division', token_hint: 'tok-3f9e' },
      tokens: {
        sealed: 'sealed-9b2a',
        accessTokenExpiresAt: 1,
        idTokenExpiresAt: undefined,
        refreshable: true,
      },
    }),
  );
  const raw = await memory.query(RECORD_TYPES.session);
  const text = JSON.stringify(raw);
  for (const secret of ['user-7c1d', 'grace.hopper', 'cobol-division', 'tok-3f9e', 'sealed-9b2a', 'Ada']) {
    assert.ok(!text.includes(secret), `the stored value shows ${secret}`);
  }
  const data = raw[0]?.data ?? '';
  await memory.put(RECORD_TYPES.session, 's2', data);
  await memory.put(RECORD_TYPES.session, 's3', `${data.slice(0, -4)}AAAA`);
  const b = instance({ logger });
  assert.equal(await b.get('s2'), undefined, 'a value moved to another id opened');
  assert.equal(await b.get('s3'), undefined, 'a tampered value opened');
  assert.equal(await b.get('s2'), undefined);
  assert.equal(logger.records.filter((r) => r.level === 'warn').length, 2);
  assert.ok(!JSON.stringify(logger.records).includes('grace.hopper'));
});

test('close stops following the feed', async () => {
  const { clock, instance } = rig();
  const a = instance();
  const b = instance();
  await a.put(session('s1', clock.now));
  await b.get('s1');
  const seen = invalidations(b);
  b.close();
  await a.delete('s1');
  await flush();
  assert.deepEqual(seen, []);
});

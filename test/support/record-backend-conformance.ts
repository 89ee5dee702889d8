import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { RawRecord, RecordBackend, RecordChange } from '../../src/session/records.js';
import { RecordConflictError } from '../../src/session/records.js';
import { waitFor } from './wait.js';

/** One backend opened for one test, with what the suite needs around it. */
export interface BackendUnderTest {
  readonly backend: RecordBackend;
  /** Another client of the same store (another instance), for feed and lease tests across instances. */
  readonly second?: () => Promise<RecordBackend>;
  /** Every value the store holds, as it holds it (for the at-rest tests of the sealing layer). */
  readonly rawValues?: () => Promise<string[]>;
  /** Closes the backend, the second clients and anything the test opened for it. */
  close(): Promise<void>;
}

/**
 * The one conformance suite of RecordBackend (src/session/records.ts), run against every backend:
 * put/get/delete, versions, ifVersion, TTL expiry, query by type, the change feed across clients,
 * concurrent writers, leases and close. `open` is called once per test and must give a store that
 * is empty (a fresh store or a fresh key prefix).
 */
export function describeRecordBackend(name: string, open: () => Promise<BackendUnderTest>): void {
  const withBackend = async (run: (under: BackendUnderTest) => Promise<void>): Promise<void> => {
    const under = await open();
    try {
      await run(under);
    } finally {
      await under.close();
    }
  };
  const test = (title: string, run: (under: BackendUnderTest) => Promise<void>): void => {
    it(title, () => withBackend(run));
  };

  describe(`RecordBackend conformance: ${name}`, () => {
    test('put, get and delete a record', async ({ backend }) => {
      const put = await backend.put('session', 'a', 'data-a');
      assert.equal(put.type, 'session');
      assert.equal(put.id, 'a');
      assert.equal(put.data, 'data-a');
      assert.equal(put.expiresAt, undefined);
      assert.ok(put.version > 0, 'versions are never 0');
      assert.deepEqual(await backend.get('session', 'a'), put);
      assert.equal(await backend.get('session', 'b'), undefined);
      assert.equal(await backend.get('other', 'a'), undefined, 'types are separate');
      assert.equal(await backend.delete('session', 'a'), true);
      assert.equal(await backend.get('session', 'a'), undefined);
      assert.equal(await backend.delete('session', 'a'), false, 'a second delete finds nothing');
      await backend.ping();
    });

    test('versions increase with every put of a record and across records', async ({ backend }) => {
      const first = await backend.put('session', 'a', '1');
      const second = await backend.put('session', 'a', '2');
      const other = await backend.put('session', 'b', '3');
      const third = await backend.put('session', 'a', '4');
      assert.ok(second.version > first.version);
      assert.ok(other.version > second.version);
      assert.ok(third.version > other.version);
      assert.equal((await backend.get('session', 'a'))?.data, '4');
    });

    test('ifVersion 0 writes only when absent; a mismatch writes nothing', async ({ backend }) => {
      const claimed = await backend.put('used-once', 'x', 'first', { ifVersion: 0 });
      await assert.rejects(backend.put('used-once', 'x', 'second', { ifVersion: 0 }), RecordConflictError);
      assert.equal((await backend.get('used-once', 'x'))?.data, 'first');
      const updated = await backend.put('used-once', 'x', 'update', { ifVersion: claimed.version });
      assert.ok(updated.version > claimed.version);
      await assert.rejects(
        backend.put('used-once', 'x', 'stale', { ifVersion: claimed.version }),
        RecordConflictError,
      );
      await assert.rejects(backend.put('used-once', 'absent', 'v', { ifVersion: 5 }), RecordConflictError);
      assert.equal(await backend.get('used-once', 'absent'), undefined);
      assert.deepEqual(await backend.get('used-once', 'x'), updated);
    });

    test('a record with a TTL expires by itself and is then absent', async ({ backend }) => {
      const before = Date.now();
      const put = await backend.put('session', 'short', 'v', { ttlMs: 200 });
      const kept = await backend.put('session', 'kept', 'v');
      assert.ok(
        put.expiresAt !== undefined && put.expiresAt >= before + 200 && put.expiresAt <= Date.now() + 200,
      );
      assert.equal((await backend.get('session', 'short'))?.expiresAt, put.expiresAt);
      await waitFor(async () => (await backend.get('session', 'short')) === undefined, {
        what: 'the 200 ms record to expire',
        timeoutMs: 5_000,
        intervalMs: 25,
      });
      assert.ok(Date.now() >= put.expiresAt, 'not gone before its expiry');
      assert.deepEqual(await backend.get('session', 'kept'), kept);
      const claimed = await backend.put('session', 'short', 'again', { ifVersion: 0 });
      assert.equal(claimed.data, 'again', 'an expired record counts as absent');
      const renewed = await backend.put('session', 'kept', 'v2', { ttlMs: 60_000 });
      assert.ok(renewed.expiresAt !== undefined);
      const persisted = await backend.put('session', 'kept', 'v3');
      assert.equal(persisted.expiresAt, undefined, 'a put without ttl removes the expiry');
    });

    test('query returns the live records of one type, at most limit', async ({ backend }) => {
      const puts = await Promise.all(['a', 'b', 'c'].map((id) => backend.put('session', id, `data-${id}`)));
      await backend.put('used-once', 'a', 'other type');
      const brief = await backend.put('session', 'brief', 'v', { ttlMs: 300 });
      const all = await backend.query('session');
      if (Date.now() < (brief.expiresAt ?? 0)) assert.equal(all.length, 4, 'the live TTL record is included');
      const byId = (records: RawRecord[]): RawRecord[] =>
        [...records].sort((x, y) => x.id.localeCompare(y.id));
      await waitFor(async () => (await backend.get('session', 'brief')) === undefined, {
        what: 'the 300 ms record to expire',
        timeoutMs: 5_000,
        intervalMs: 25,
      });
      assert.deepEqual(
        byId(await backend.query('session')),
        byId(puts),
        'expired excluded, other type excluded',
      );
      const limited = await backend.query('session', { limit: 2 });
      assert.equal(limited.length, 2);
      assert.ok(limited.every((r) => puts.some((p) => p.id === r.id && p.data === r.data)));
      assert.deepEqual(await backend.query('absent-type'), []);
    });

    test('the change feed delivers puts and deletes to another client, in order', async (under) => {
      const watcher = under.second === undefined ? under.backend : await under.second();
      const seen: RecordChange[] = [];
      const id = `feed-${randomUUID()}`;
      const stop = watcher.watch((change) => {
        if (change.kind !== 'put' && change.kind !== 'delete') return;
        if (change.id === id) seen.push(change);
      });
      const first = await under.backend.put('session', id, 'v1');
      const second = await under.backend.put('session', id, 'v2');
      await under.backend.delete('session', id);
      const events = await waitFor(async () => (seen.length >= 3 ? seen : undefined), {
        what: 'three changes on the feed of the other client',
        timeoutMs: 5_000,
        intervalMs: 10,
      });
      assert.deepEqual(
        events.map((e) => (e.kind === 'put' || e.kind === 'delete' ? [e.kind, e.type, e.version] : [e.kind])),
        [
          ['put', 'session', first.version],
          ['put', 'session', second.version],
          ['delete', 'session', events[2]?.kind === 'delete' ? events[2].version : -1],
        ],
      );
      const deleted = events[2];
      assert.ok(
        deleted?.kind === 'delete' && deleted.version > second.version,
        'a delete orders after the put',
      );
      stop();
      await under.backend.put('session', id, 'after-unsubscribe');
      await under.backend.put('session', `${id}-marker`, 'x');
      assert.equal(seen.length, 3, 'an unsubscribed listener hears nothing more');
    });

    test('50 concurrent ifVersion writers on one record: exactly one wins per version', async (under) => {
      const other = under.second === undefined ? under.backend : await under.second();
      let current = await under.backend.put('session', 'contended', 'start');
      for (let round = 0; round < 5; round += 1) {
        const results = await Promise.allSettled(
          Array.from({ length: 50 }, (_, i) =>
            (i % 2 === 0 ? under.backend : other).put('session', 'contended', `w${round}-${i}`, {
              ifVersion: current.version,
            }),
          ),
        );
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r) => r.status === 'rejected');
        assert.equal(won.length, 1, `round ${round}: exactly one writer wins`);
        assert.ok(lost.every((r) => r.status === 'rejected' && r.reason instanceof RecordConflictError));
        const winner = won[0];
        assert.ok(winner?.status === 'fulfilled');
        assert.deepEqual(await under.backend.get('session', 'contended'), winner.value);
        current = winner.value;
      }
    });

    test('200 concurrent puts of distinct ids are all readable', async ({ backend }) => {
      const ids = Array.from({ length: 200 }, (_, i) => `many-${i}`);
      const puts = await Promise.all(ids.map((id) => backend.put('session', id, `data-${id}`)));
      assert.equal(new Set(puts.map((p) => p.version)).size, 200, 'every put has its own version');
      const reads = await Promise.all(ids.map((id) => backend.get('session', id)));
      assert.deepEqual(reads, puts);
      assert.equal((await backend.query('session')).length, 200);
    });

    test('leases: one holder at a time, released by its token only, ended by the TTL', async (under) => {
      const other = under.second === undefined ? under.backend : await under.second();
      const token = await under.backend.acquireLease('refresh:abc', 60_000);
      assert.equal(typeof token, 'string');
      assert.equal(await other.acquireLease('refresh:abc', 60_000), undefined, 'held: refused');
      assert.equal(
        typeof (await other.acquireLease('refresh:other', 60_000)),
        'string',
        'names are separate',
      );
      await other.releaseLease('refresh:abc', 'not-the-token');
      assert.equal(
        await other.acquireLease('refresh:abc', 60_000),
        undefined,
        'a wrong token releases nothing',
      );
      await under.backend.releaseLease('refresh:abc', token ?? '');
      const next = await other.acquireLease('refresh:abc', 150);
      assert.equal(typeof next, 'string', 'acquirable after release');
      assert.equal(await under.backend.acquireLease('refresh:abc', 60_000), undefined);
      const after = await waitFor(async () => under.backend.acquireLease('refresh:abc', 60_000), {
        what: 'the 150 ms lease to end by itself',
        timeoutMs: 5_000,
        intervalMs: 25,
      });
      assert.notEqual(after, next);
      await other.releaseLease('refresh:abc', next ?? '');
      assert.equal(
        await other.acquireLease('refresh:abc', 60_000),
        undefined,
        'an expired token leaves the new lease',
      );
    });

    test('after close every call rejects', async ({ backend }) => {
      await backend.put('session', 'a', 'v');
      await backend.close();
      await assert.rejects(backend.get('session', 'a'));
      await assert.rejects(backend.put('session', 'a', 'v'));
      await assert.rejects(backend.delete('session', 'a'));
      await assert.rejects(backend.query('session'));
      await assert.rejects(backend.acquireLease('l', 1_000));
      await assert.rejects(backend.ping());
    });
  });
}

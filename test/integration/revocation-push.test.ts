// Revocation is pushed (issue 35), across instances through a real Redis: two instances' session
// stacks (a Redis backend each, on one Debian redis-server, sealed records, the session store) and
// two snapshot stores, each with the process's revocation feed. A session deleted through instance
// A shows up as a revocation in what both A's and B's snapshot stores serve (the ECDS resource ADS
// pushes to their Envoys) within 100 ms; the test prints the latency of 20 deletions. The compile
// of the real filter is tested elsewhere: here a stand-in encodes the revocations it is handed, so
// the assertions read back exactly what the feed gave compile.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DECISION_CLOCK_SKEW_S, decisionSessionId, FAST_PATH_FILTER } from '../../src/contract/fast-path.js';
import { createRedisBackend, type RedisBackend } from '../../src/databroker/redis/redis-backend.js';
import { RecordSessionStore } from '../../src/databroker/record-session-store.js';
import { SealedRecords } from '../../src/databroker/sealed-records.js';
import { RESOURCE_TYPES, type ResourceType } from '../../src/proto/type-urls.js';
import type { Session } from '../../src/session/session.js';
import { silentLogger } from '../../src/shared/logger.js';
import { RevocationFeed } from '../../src/xds/fast-path-revocations.js';
import { snapshotOf } from '../../src/xds/snapshot/build-snapshot.js';
import { OVERLAY_TYPE, SnapshotStore } from '../../src/xds/snapshot/snapshot-store.js';
import type { EncodedResource } from '../../src/xds/snapshot/types.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';
import { recordingCompile, revocationsIn, type CompiledRevocations } from '../support/revocation-compile.js';
import { TEST_RECORDS_SECRET } from '../support/session-store.js';
import { waitFor } from '../support/wait.js';

const LIFETIME_MS = 120_000;
const SKEW_MS = DECISION_CLOCK_SKEW_S * 1000;
const DELETIONS = 20;

/** What one served snapshot's fast path filter said, and when it was served (performance.now()). */
interface Served {
  readonly atMs: number;
  readonly content: CompiledRevocations;
}

/** One instance: its session stack on the shared Redis, its snapshot store and its feed. */
interface Instance {
  readonly backend: RedisBackend;
  readonly sessions: RecordSessionStore;
  readonly store: SnapshotStore;
  readonly feed: RevocationFeed;
  readonly served: Served[];
}

async function startInstance(url: string): Promise<Instance> {
  const backend = createRedisBackend({ url, logger: silentLogger, keyPrefix: 'revocation-push:' });
  await backend.connect();
  const records = new SealedRecords(backend, { secret: () => TEST_RECORDS_SECRET, logger: silentLogger });
  const sessions = new RecordSessionStore(records, { outageGraceMs: 30_000, logger: silentLogger });
  const store = new SnapshotStore();
  // A build with no resources: the overlay is served with the first build, as in a process.
  const empty = {} as Record<ResourceType, ReadonlyMap<string, EncodedResource>>;
  for (const type of RESOURCE_TYPES) empty[type] = new Map();
  store.publish(snapshotOf(empty));
  const served: Served[] = [];
  store.subscribe((snapshot) => {
    const resource = snapshot.resources[OVERLAY_TYPE].get(FAST_PATH_FILTER);
    if (resource !== undefined) served.push({ atMs: performance.now(), content: revocationsIn(resource) });
  });
  const feed = new RevocationFeed({
    sessions,
    changes: records,
    lifetimeMs: LIFETIME_MS,
    overlay: (resources) => store.overlay(resources),
    compile: recordingCompile().compile,
    logger: silentLogger,
  });
  return { backend, sessions, store, feed, served };
}

function session(id: string): Session {
  const now = Date.now();
  return {
    id,
    userId: `user-${id}`,
    email: `${id}@example.com`,
    emailVerified: true,
    name: undefined,
    groups: [],
    claims: {},
    issuedAt: now,
    expiresAt: now + 3_600_000,
    idpId: 'test-idp',
  };
}

/** The first snapshot `instance` served from index `from` on that revokes `sid` from `notBeforeMs` on. */
function revokedIn(instance: Instance, from: number, sid: string, notBeforeMs: number): Served | undefined {
  return instance.served
    .slice(from)
    .find((served) =>
      served.content.revocations.some((entry) => entry.sid === sid && entry.notBeforeMs >= notBeforeMs),
    );
}

function summary(latencies: readonly number[]): string {
  const sorted = [...latencies].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
  return `median ${median.toFixed(1)} ms, worst ${(sorted.at(-1) ?? Number.NaN).toFixed(1)} ms`;
}

describe('revocations pushed through Redis to every instance', () => {
  let redis: TestRedisServer;
  let a: Instance;
  let b: Instance;

  before(async () => {
    redis = await startRedisServer();
    a = await startInstance(redis.url);
    b = await startInstance(redis.url);
  });

  after(async () => {
    for (const instance of [a, b]) {
      instance?.feed.close();
      instance?.sessions.close();
      await instance?.backend.close();
    }
    await redis?.close();
  });

  test('both start serving the empty filter', () => {
    for (const instance of [a, b]) {
      const resource = instance.store.current()?.resources[OVERLAY_TYPE].get(FAST_PATH_FILTER);
      assert.ok(resource !== undefined, 'the fast path filter is served');
      assert.deepEqual(revocationsIn(resource), { revocations: [], overflowed: false });
    }
  });

  test(`a session deleted through A is revoked in A's and B's served filter within 100 ms (${DELETIONS} deletions)`, async () => {
    const ids = Array.from({ length: DELETIONS }, (_, i) => `revoked-${i}-${Date.now()}`);
    for (const id of ids) await a.sessions.put(session(id));
    // Each put revokes too (tokens minted before a replaced session are refused): let those settle.
    await waitFor(async () => ids.every((id) => revokedIn(b, 0, decisionSessionId(id), 0) !== undefined), {
      what: 'the sign-ins to reach B',
    });
    const latencies = { a: [] as number[], b: [] as number[] };
    for (const id of ids) {
      const sid = decisionSessionId(id);
      const from = { a: a.served.length, b: b.served.length };
      // Later than the put's revocation: the deletion moves the entry's notBefore.
      await new Promise((resolve) => setTimeout(resolve, 15));
      const notBeforeMs = Date.now() + SKEW_MS;
      const started = performance.now();
      await a.sessions.delete(id);
      const [inA, inB] = await Promise.all(
        (['a', 'b'] as const).map((name) =>
          waitFor(async () => revokedIn(name === 'a' ? a : b, from[name], sid, notBeforeMs), {
            what: `the deletion of ${id} served by ${name}`,
            timeoutMs: 5_000,
            intervalMs: 5,
          }),
        ),
      );
      latencies.a.push((inA?.atMs ?? Number.NaN) - started);
      latencies.b.push((inB?.atMs ?? Number.NaN) - started);
      assert.equal(b.feed.revokedUntil(sid) !== undefined, true, 'B mints no token for it');
    }
    console.log(`# delete through A -> A's snapshot store serves it: ${summary(latencies.a)}`);
    console.log(
      `# delete through A -> B's snapshot store serves it (Redis change feed): ${summary(latencies.b)}`,
    );
    for (const [name, list] of Object.entries(latencies)) {
      const worst = Math.max(...list);
      assert.ok(worst < 100, `${name}: every deletion served within 100 ms (worst ${worst.toFixed(1)} ms)`);
    }
    const last = b.served.at(-1)?.content;
    assert.equal(last?.overflowed, false);
    assert.deepEqual(
      last?.revocations.map((entry) => entry.sid).filter((sid) => ids.map(decisionSessionId).includes(sid)),
      ids.map(decisionSessionId).sort(),
      'sorted by sid, every deleted session held',
    );
  });
});

// The revocation feed (xds/fast-path-revocations.ts) with a fake session store, a fake overlay and
// a recording compile: each invalidated session reaches the overlay at once as a revocation of its
// decision session id up to now + skew; bursts are coalesced; entries that age out are republished
// away; the lifetime 0 empties the overlay and turning it back on forgets nothing; a compile that
// throws publishes the refuse-everything filter, or keeps the last good one; a lost change feed
// refuses every token; without a session store every token is refused.
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import {
  DECISION_CLOCK_SKEW_S,
  decisionSessionId,
  FAST_PATH_FILTER,
} from '../../../src/contract/fast-path.js';
import type { RecordChange } from '../../../src/session/records.js';
import { recordingLogger } from '../../../src/shared/logger.js';
import { RevocationFeed, type RevocationFeedOptions } from '../../../src/xds/fast-path-revocations.js';
import type { EncodedResource } from '../../../src/xds/snapshot/types.js';
import {
  recordingCompile,
  revocationsIn,
  type CompiledRevocations,
} from '../../support/revocation-compile.js';
import { waitFor } from '../../support/wait.js';

const LIFETIME = 120_000;
const SKEW_MS = DECISION_CLOCK_SKEW_S * 1000;
const START = 1_700_000_000_000;

/** One overlay call: what it carried (undefined: emptied) and when. */
interface Published {
  readonly content: CompiledRevocations | undefined;
  readonly atMs: number;
}

function listeners<T>() {
  const set = new Set<(value: T) => void>();
  return {
    add(listener: (value: T) => void): () => void {
      set.add(listener);
      return () => void set.delete(listener);
    },
    emit(value: T): void {
      for (const listener of set) listener(value);
    },
    get size() {
      return set.size;
    },
  };
}

const feeds: RevocationFeed[] = [];
afterEach(() => {
  for (const feed of feeds.splice(0)) feed.close();
});

/** What a test changes of the rig: the feed's options, and which fakes to leave out. */
type RigOptions = Partial<Omit<RevocationFeedOptions, 'sessions'>> & {
  readonly failWhen?: Parameters<typeof recordingCompile>[0];
  /** No session store (a proxy alone without databroker_service_url). */
  readonly noSessions?: boolean;
  /** No overlay (an authorize process). */
  readonly noOverlay?: boolean;
};

/** A feed over fakes; `options` override the defaults. */
function rig(options: RigOptions = {}) {
  const { failWhen, noSessions, noOverlay, ...feedOptions } = options;
  let now = START;
  const invalidations = listeners<string>();
  const changes = listeners<RecordChange>();
  const published: Published[] = [];
  const logger = recordingLogger();
  const compile = recordingCompile(failWhen);
  const feed = new RevocationFeed({
    sessions: noSessions === true ? undefined : { onInvalidate: (listener) => invalidations.add(listener) },
    changes: { watch: (listener) => changes.add(listener) },
    lifetimeMs: LIFETIME,
    ...(noOverlay === true
      ? {}
      : {
          overlay: (resources: ReadonlyMap<string, EncodedResource>) => {
            const resource = resources.get(FAST_PATH_FILTER);
            assert.equal(resources.size, resource === undefined ? 0 : 1, 'the fast path filter only');
            const content = resource === undefined ? undefined : revocationsIn(resource);
            published.push({ content, atMs: performance.now() });
            return true;
          },
        }),
    compile: compile.compile,
    logger,
    now: () => now,
    pruneIntervalMs: 5,
    ...feedOptions,
  });
  feeds.push(feed);
  return {
    feed,
    published,
    calls: compile.calls,
    logger,
    invalidate: (id: string) => invalidations.emit(id),
    change: (change: RecordChange) => changes.emit(change),
    invalidations,
    advance(ms: number) {
      now += ms;
    },
    now: () => now,
    last: () => published.at(-1)?.content,
  };
}

const sid = (id: string) => decisionSessionId(id);

test('at start the overlay carries the empty filter, before any build', () => {
  const { published, calls } = rig();
  assert.deepEqual(
    published.map((p) => p.content),
    [{ revocations: [], overflowed: false }],
  );
  assert.deepEqual(
    calls.map((c) => [c.revocations, c.overflowed]),
    [[[], false]],
  );
});

test('an invalidated session reaches the overlay within milliseconds, as its decision sid up to now + skew', async () => {
  const { published, invalidate, feed, now } = rig();
  // Warm up (the first encode of a revocation compiles protobufjs's encoders), then wait out coalescing.
  invalidate('warm-up');
  await waitFor(async () => published.length === 2, { what: 'the warm-up published', intervalMs: 1 });
  await new Promise((resolve) => setTimeout(resolve, 12));
  const latencies: number[] = [];
  for (let i = 0; i < 20; i++) {
    const before = published.length;
    const started = performance.now();
    invalidate(`session-${i}`);
    const seen = await waitFor(async () => published[before], {
      what: `revocation ${i} published`,
      intervalMs: 1,
    });
    latencies.push(seen.atMs - started);
    assert.ok(
      seen.content?.revocations.some(
        (r) => r.sid === sid(`session-${i}`) && r.notBeforeMs === now() + SKEW_MS,
      ),
    );
    // The next one waits out the coalescing interval: keep them apart to measure each one alone.
    await new Promise((resolve) => setTimeout(resolve, 12));
  }
  assert.equal(
    feed.revokedUntil(sid('session-3')),
    now() + SKEW_MS,
    'authorize mints nothing for it until then',
  );
  assert.equal(feed.revokedUntil(sid('other')), undefined);
  const sorted = [...latencies].sort((a, b) => a - b);
  const worst = sorted.at(-1) ?? Infinity;
  console.log(`# invalidate -> overlay: median ${sorted[10]?.toFixed(2)} ms, worst ${worst.toFixed(2)} ms`);
  assert.ok(worst < 100, `every push took under 100 ms (worst ${worst} ms)`);
});

test('a burst is coalesced: many invalidations in one turn are one publish; later ones at most every coalesceMs', async () => {
  const { published, invalidate, calls } = rig({ coalesceMs: 300 });
  for (let i = 0; i < 500; i++) invalidate(`burst-${i}`);
  await waitFor(async () => published.length === 2, { what: 'the burst published', intervalMs: 1 });
  assert.equal(published[1]?.content?.revocations.length, 500);
  const first = calls[1]?.atMs ?? 0;
  invalidate('later-1');
  await new Promise((resolve) => setImmediate(resolve));
  invalidate('later-2');
  await waitFor(async () => published.length === 3, { what: 'the next publish', intervalMs: 1 });
  const gap = (calls[2]?.atMs ?? 0) - first;
  // The compile begins a little after the publish does (pruning and sorting 500 entries).
  assert.ok(gap >= 250, `no sooner than coalesceMs after the last began (${gap} ms)`);
  assert.equal(published[2]?.content?.revocations.length, 502, 'both later ones in one publish');
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(published.length, 3, 'nothing more to push');
  invalidate('later-1');
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(published.length, 3, 'a repeat with the same notBefore changes nothing');
});

test('entries that age out are pruned on the timer and the filter republished without them', async () => {
  const { published, invalidate, advance, last } = rig();
  invalidate('old');
  advance(1000);
  invalidate('new');
  await waitFor(async () => last()?.revocations.length === 2, { what: 'both published', intervalMs: 1 });
  advance(LIFETIME + 2 * SKEW_MS - 1000);
  await waitFor(async () => last()?.revocations.length === 1, { what: 'old pruned', intervalMs: 1 });
  assert.deepEqual(
    last()?.revocations.map((r) => r.sid),
    [sid('new')],
  );
  advance(1000);
  await waitFor(async () => last()?.revocations.length === 0, { what: 'new pruned', intervalMs: 1 });
  const count = published.length;
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(published.length, count, 'no republish while nothing changes');
});

test('lifetime 0: nothing at start; turned on it publishes at once with what was revoked meanwhile; off empties', async () => {
  const { published, invalidate, feed, last } = rig({ lifetimeMs: 0 });
  assert.equal(published.length, 0, 'the overlay carries nothing for the fast path');
  invalidate('while-off');
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(published.length, 0, 'kept, not pushed');
  feed.setLifetime(LIFETIME);
  assert.equal(published.length, 1, 'synchronously: before the build that names the filter');
  assert.deepEqual(
    last()?.revocations.map((r) => r.sid),
    [sid('while-off')],
  );
  feed.setLifetime(0);
  assert.equal(published.length, 1, 'emptied only after the build that drops the filter');
  await waitFor(async () => published.length === 2, { what: 'the overlay emptied', intervalMs: 1 });
  assert.equal(published[1]?.content, undefined);
});

test('a compile that throws publishes the filter refusing every token; failing that, keeps the last good', async () => {
  let mode: 'ok' | 'entries' | 'all' = 'ok';
  const { published, invalidate, logger, last, calls } = rig({
    failWhen: (revocations, overflowed) =>
      mode === 'all' || (mode === 'entries' && (revocations.length > 0 || !overflowed))
        ? `broken (${mode})`
        : undefined,
  });
  invalidate('a');
  await waitFor(async () => last()?.revocations.length === 1, { what: 'a published', intervalMs: 1 });
  mode = 'entries';
  invalidate('b');
  await waitFor(async () => last()?.overflowed === true, { what: 'the refuse-all filter', intervalMs: 1 });
  assert.deepEqual(last(), { revocations: [], overflowed: true });
  mode = 'all';
  const count = published.length;
  invalidate('c');
  await waitFor(async () => calls.filter((c) => c.revocations.length === 3).length >= 2, {
    what: 'retried on the prune tick',
    intervalMs: 1,
  });
  assert.equal(published.length, count, 'nothing published: Envoy keeps the last one');
  const errors = logger.records
    .filter((r) => r.level === 'error')
    .map((r) => `${r.msg}: ${(r.obj as { err?: string }).err}`);
  assert.equal(
    new Set(errors).size,
    errors.length,
    `each failure logged once per spell: ${errors.join(' | ')}`,
  );
  assert.equal(errors.length, 3, 'the entries, then everything, then the fallback');
  mode = 'ok';
  await waitFor(async () => last()?.revocations.length === 3, {
    what: 'recovered on the next tick',
    intervalMs: 1,
  });
  assert.equal(last()?.overflowed, false);
  assert.ok(logger.records.some((r) => r.level === 'info' && /again/.test(r.msg ?? '')));
});

test('an overlay that throws is logged and does not stop the feed', async () => {
  let throwing = true;
  const seen: number[] = [];
  const { invalidate, logger } = rig({
    overlay: (resources) => {
      if (throwing) throw new Error('store broke');
      seen.push(resources.size);
      return true;
    },
  });
  invalidate('x');
  await waitFor(async () => logger.records.some((r) => r.level === 'error'), {
    what: 'the error logged',
    intervalMs: 1,
  });
  throwing = false;
  await waitFor(async () => seen.length > 0, { what: 'published on a later tick', intervalMs: 1 });
});

test('a lost change feed refuses every token until it is back, then every token minted before for one lifetime', async () => {
  const { invalidate, change, last, advance, feed, now } = rig();
  change({ kind: 'lost' });
  await waitFor(async () => last()?.overflowed === true, { what: 'refuse all', intervalMs: 1 });
  assert.equal(feed.revokedUntil(sid('anyone')), Number.POSITIVE_INFINITY);
  advance(10 * LIFETIME);
  change({ kind: 'resumed' });
  invalidate('after');
  await waitFor(async () => last()?.revocations.length === 1, {
    what: 'the revocation after',
    intervalMs: 1,
  });
  assert.equal(last()?.overflowed, true, 'changes may have been missed');
  assert.equal(feed.revokedUntil(sid('anyone')), now() + SKEW_MS);
  advance(LIFETIME + 2 * SKEW_MS);
  await waitFor(async () => last()?.overflowed === false, { what: 'back to the fast path', intervalMs: 1 });
});

test('past maxEntries the filter refuses every token (with a warning) until the revocations age out', async () => {
  const { invalidate, last, advance, logger } = rig({ maxEntries: 3 });
  for (const id of ['1', '2', '3', '4']) invalidate(id);
  await waitFor(async () => last()?.overflowed === true, { what: 'overflowed', intervalMs: 1 });
  assert.equal(last()?.revocations.length, 3);
  assert.equal(logger.records.filter((r) => r.level === 'warn').length, 1);
  advance(LIFETIME + 2 * SKEW_MS);
  await waitFor(async () => last()?.overflowed === false && last()?.revocations.length === 0, {
    what: 'recovered',
    intervalMs: 1,
  });
});

test('without a session store every token is refused, and said so', () => {
  const { published, logger } = rig({ noSessions: true });
  assert.deepEqual(
    published.map((p) => p.content),
    [{ revocations: [], overflowed: true }],
  );
  assert.ok(logger.records.some((r) => r.level === 'warn' && /databroker_service_url/.test(r.msg ?? '')));
});

test('without an overlay (authorize alone) it only keeps the set; close unsubscribes', async () => {
  const { feed, invalidate, invalidations, now } = rig({ noOverlay: true });
  invalidate('s');
  assert.equal(feed.revokedUntil(sid('s')), now() + SKEW_MS);
  assert.equal(invalidations.size, 1);
  feed.close();
  assert.equal(invalidations.size, 0);
});

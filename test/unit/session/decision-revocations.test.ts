// The fast path's revocation set (session/decision-revocations.ts), on a fake clock: an entry
// refuses its session's tokens up to its notBefore and stays until they have all expired (notBefore
// + lifetime + skew); a repeat keeps the later notBefore; entries come sorted by sid; the floor
// only rises, drops the entries it covers and counts in revokedUntil, and leaves the compiled
// output once its tokens have expired; a full set raises the floor instead of forgetting a
// revocation; losing the change feed refuses every token until it is back; a shorter lifetime
// after a reload does not shorten the holds of tokens minted under the longer one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DecisionRevocations } from '../../../src/session/decision-revocations.js';

const LIFETIME = 120_000;
const SKEW = 5_000;
/** How long after its notBefore an entry stays. */
const HOLD = LIFETIME + SKEW;
const START = 1_000_000;

function clocked(maxEntries = 100, lifetimeMs = LIFETIME) {
  let now = START;
  const set = new DecisionRevocations({ lifetimeMs, skewMs: SKEW, maxEntries, now: () => now });
  return {
    set,
    advance: (ms: number) => {
      now += ms;
    },
    now: () => now,
  };
}

test('an entry stays until every token it refuses has expired (notBefore + lifetime + skew), then goes', () => {
  const { set, advance } = clocked();
  assert.equal(set.revoke('s-a', START + SKEW), true);
  assert.deepEqual(set.entries(), [{ sid: 's-a', notBeforeMs: START + SKEW }]);
  assert.equal(set.revokedUntil('s-a'), START + SKEW);
  assert.equal(set.revokedUntil('s-other'), undefined);
  advance(SKEW + HOLD - 1);
  assert.equal(set.prune(), false, 'one ms before the last token it refuses stops being honoured');
  assert.equal(set.revokedUntil('s-a'), START + SKEW);
  advance(1);
  assert.equal(set.revokedUntil('s-a'), undefined, 'expired entries answer undefined before a prune');
  assert.equal(set.prune(), true);
  assert.deepEqual(set.entries(), []);
  assert.equal(set.prune(), false);
});

test('a repeat keeps the later notBefore (and holds from it); an earlier one is no change', () => {
  const { set, advance } = clocked();
  assert.equal(set.revoke('s-a', START + 100), true);
  assert.equal(set.revoke('s-a', START + 50), false, 'earlier: nothing changes');
  assert.equal(set.revoke('s-a', START + 100), false, 'the same: nothing changes');
  assert.equal(set.revoke('s-a', START + 10_000), true, 'later: the entry moves');
  assert.deepEqual(set.entries(), [{ sid: 's-a', notBeforeMs: START + 10_000 }]);
  advance(100 + HOLD);
  assert.equal(set.prune(), false, 'held from the later notBefore');
  advance(10_000);
  assert.equal(set.prune(), true);
});

test('entries come sorted by sid, whatever the order of revocation', () => {
  const { set } = clocked();
  for (const sid of ['s-c', 's-a', 'S-z', 's-b', 's-a']) set.revoke(sid, START);
  assert.deepEqual(
    set.entries().map((entry) => entry.sid),
    ['S-z', 's-a', 's-b', 's-c'],
  );
  assert.equal(set.size, 4);
});

test('raising the floor drops the entries it covers; it only rises; revokedUntil is the later of entry and floor', () => {
  const { set } = clocked();
  set.revoke('s-1', START + 100);
  set.revoke('s-2', START + 200);
  set.revoke('s-3', START + 300);
  assert.equal(set.floorMs, undefined);
  assert.equal(set.activeFloorMs(), undefined);
  assert.equal(set.revokedUntil('s-other'), undefined);
  assert.equal(set.raiseFloor(START + 200), true);
  assert.equal(set.floorMs, START + 200);
  assert.equal(set.activeFloorMs(), START + 200);
  assert.deepEqual(
    set.entries(),
    [{ sid: 's-3', notBeforeMs: START + 300 }],
    'at or below the floor: dropped',
  );
  assert.equal(set.revokedUntil('s-1'), START + 200, 'a dropped entry is held by the floor');
  assert.equal(set.revokedUntil('s-other'), START + 200, 'every session is');
  assert.equal(set.revokedUntil('s-3'), START + 300, 'its own, later');
  assert.equal(set.raiseFloor(START + 150), false, 'a lower floor changes nothing');
  assert.equal(set.raiseFloor(START + 200), false, 'nor the same one');
  assert.equal(set.floorMs, START + 200);
  assert.equal(set.revoke('s-4', START + 200), false, 'a revocation at the floor is covered');
  assert.equal(set.revoke('s-4', START + 199), false, 'and below it');
  assert.equal(set.size, 1);
  assert.equal(set.revoke('s-4', START + 201), true, 'above it: an entry');
  assert.equal(set.raiseFloor(START + 250), true, 'a higher floor is a change even when it drops nothing');
  assert.deepEqual(
    set.entries().map((entry) => entry.sid),
    ['s-3'],
  );
});

test('the floor leaves the compiled output once every token it refuses has expired, and stays', () => {
  const { set, advance } = clocked();
  set.raiseFloor(START + 1000);
  set.revoke('s-a', START + 2000);
  advance(1000 + HOLD - 1);
  assert.equal(set.prune(), false);
  assert.equal(set.activeFloorMs(), START + 1000);
  assert.equal(set.revokedUntil('s-other'), START + 1000);
  advance(1);
  assert.equal(set.revokedUntil('s-other'), undefined, 'expired: answers undefined before a prune');
  assert.equal(set.revokedUntil('s-a'), START + 2000);
  assert.equal(set.prune(), true, 'retired from the output: a change');
  assert.equal(set.activeFloorMs(), undefined);
  assert.equal(set.floorMs, START + 1000, 'but kept: it only rises');
  assert.equal(set.prune(), false);
  assert.equal(set.revoke('s-b', START + 500), false, 'below an expired floor: every such token has expired');
  assert.equal(set.raiseFloor(START + 900), false, 'a lower floor is no change');
  assert.equal(set.raiseFloor(START + HOLD + 1000), true, 'a new one is active again');
  assert.equal(set.activeFloorMs(), START + HOLD + 1000);
  assert.deepEqual(set.entries(), [], 's-a is covered');
});

test('a full set raises the floor to the revocation instead of forgetting it; the sessions it dropped stay refused', () => {
  const { set, advance } = clocked(2);
  set.revoke('s-1', START);
  advance(1000);
  set.revoke('s-2', START + 1000);
  advance(1000);
  assert.equal(set.revoke('s-3', START + 2000), true, 'the floor rising is a change');
  assert.equal(set.refusesAll(), false, 'never refuses all for a full set');
  assert.equal(set.floorMs, START + 2000);
  assert.deepEqual(set.entries(), [], 'every entry was revoked before it: covered');
  for (const sid of ['s-1', 's-2', 's-3', 's-unknown'])
    assert.equal(set.revokedUntil(sid), START + 2000, sid);
  assert.equal(set.revoke('s-4', START + 2000), false, 'covered by the floor');
  assert.equal(set.revoke('s-4', START + 3000), true, 'room again: back to entries');
  assert.equal(set.revoke('s-1', START + 3000), true);
  assert.equal(set.size, 2);
  assert.equal(set.revoke('s-5', START + 2500), true, 'full: the floor rises to it');
  assert.equal(set.floorMs, START + 2500);
  assert.deepEqual(
    set.entries().map((entry) => entry.sid),
    ['s-1', 's-4'],
    'entries revoked after it stay (the set may stay full)',
  );
  assert.equal(set.revoke('s-6', START + 4000), true, 'still full: the floor rises again');
  assert.equal(set.floorMs, START + 4000);
  assert.deepEqual(set.entries(), []);
  advance(2000 + HOLD);
  assert.equal(set.prune(), true, 'the floor retired');
  assert.equal(set.activeFloorMs(), undefined);
  assert.equal(set.revokedUntil('s-6'), undefined);
});

test('a full set first drops what aged out, so a revocation then fits without raising the floor', () => {
  const { set, advance } = clocked(1);
  set.revoke('s-1', START);
  advance(HOLD);
  assert.equal(set.revoke('s-2', START + HOLD), true);
  assert.equal(set.floorMs, undefined);
  assert.deepEqual(
    set.entries().map((entry) => entry.sid),
    ['s-2'],
  );
});

test('a lost feed refuses all until it is back, whatever the floor; back, the caller raises the floor', () => {
  const { set, advance } = clocked();
  set.raiseFloor(START);
  assert.equal(set.refusesAll(), false);
  assert.equal(set.setFeedLost(true), true);
  assert.equal(set.refusesAll(), true);
  assert.equal(set.revokedUntil('s-x'), Number.POSITIVE_INFINITY, 'mint nothing: revocations are unseen');
  advance(10 * HOLD);
  assert.equal(set.prune(), true, 'the floor retires beneath it');
  assert.equal(set.prune(), false);
  assert.equal(set.refusesAll(), true, 'a lost feed never ages out');
  assert.equal(set.setFeedLost(true), false, 'already refusing everything');
  // Back: what was revoked meanwhile is unknown.
  const back = START + 10 * HOLD;
  assert.equal(set.setFeedLost(false), true);
  assert.equal(set.raiseFloor(back + SKEW), true);
  assert.equal(set.refusesAll(), false);
  assert.equal(set.revokedUntil('s-x'), back + SKEW);
  assert.equal(set.setFeedLost(false), false);
});

test('a reload: a longer lifetime holds longer; a shorter one (or 0) holds the tokens minted under the longer one', () => {
  const { set, advance } = clocked(100, 60_000);
  set.revoke('s-a', START);
  set.setLifetime(120_000);
  advance(60_000 + SKEW);
  assert.equal(set.prune(), false, 'held for the longer lifetime now');
  advance(60_000);
  assert.equal(set.prune(), true);

  // Shortened at T: tokens minted just before T live the old lifetime, so the old hold counts until
  // T + old lifetime + two skews; entries revoked meanwhile are held as long.
  const t = START + 120_000 + SKEW;
  set.revoke('s-b', t);
  assert.equal(set.setLifetime(0), false, 'turning the fast path off forgets nothing');
  assert.equal(set.revoke('s-c', t + 1000), true, 'revocations are still kept while off');
  advance(HOLD - 1);
  assert.equal(set.prune(), false);
  advance(1);
  assert.equal(set.prune(), true, 's-b went after the old hold');
  assert.deepEqual(
    set.entries().map((entry) => entry.sid),
    ['s-c'],
  );
  advance(120_000 + 2 * SKEW);
  assert.equal(set.prune(), true, 'past T + old lifetime + 2 skews the lifetime 0 holds one skew');
  assert.deepEqual(set.entries(), []);
  set.revoke('s-d', t + 300_000);
  advance(300_000 - 2 * SKEW - 120_000 - HOLD + SKEW - 1);
  assert.equal(set.prune(), false);
  advance(1);
  assert.equal(set.prune(), true);
});

test('a burst into a full set stays linear: it raises the floor once and the rest are covered', () => {
  const { set, advance } = clocked(10_000);
  const started = performance.now();
  for (let i = 0; i < 100_000; i++) set.revoke(`s-${i}`, START + SKEW);
  // Later revocations, each after the last: the set refills and raises the floor every 10,000.
  for (let i = 0; i < 100_000; i++) set.revoke(`t-${i}`, START + SKEW + 1 + i);
  const tookMs = performance.now() - started;
  const floor = set.floorMs ?? Number.NaN;
  // It rose at t-10000, t-20001, ... t-90008 (each time the set had filled again).
  assert.equal(floor, START + SKEW + 1 + 90_008);
  assert.equal(set.size, 99_999 - 90_008);
  assert.ok(set.entries().every((entry) => entry.notBeforeMs > floor));
  assert.ok(tookMs < 2_000, `200,000 revocations took ${tookMs.toFixed(0)} ms`);
  advance(SKEW + 100_000 + HOLD);
  assert.equal(set.prune(), true);
  assert.equal(set.activeFloorMs(), undefined);
});

// The fast path's revocation set (session/decision-revocations.ts), on a fake clock: an entry
// refuses its session's tokens up to its notBefore and stays until they have all expired (notBefore
// + lifetime + skew); a repeat keeps the later notBefore; entries come sorted by sid; overflowing
// it, or losing the change feed, refuses every token instead of forgetting a revocation, and it
// recovers once those tokens have expired; a shorter lifetime after a reload does not shorten the
// holds of tokens minted under the longer one.
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

test('overflow: past maxEntries every token is refused until the overflowed ones expire; none is forgotten', () => {
  const { set, advance } = clocked(2);
  set.revoke('s-1', START);
  advance(1000);
  set.revoke('s-2', START + 1000);
  assert.equal(set.overflowed(), false);
  advance(1000);
  assert.equal(set.revoke('s-3', START + 2000), true, 'the overflow is a change');
  assert.equal(set.overflowed(), true);
  assert.equal(set.revoke('s-4', START + 3000), false, 'still overflowed: the resource is the same');
  assert.equal(set.revoke('s-1', START + 500), true, 'a kept entry still moves to a later notBefore');
  assert.deepEqual(
    set.entries().map((entry) => entry.sid),
    ['s-1', 's-2'],
    'the kept entries stay',
  );
  assert.equal(set.revokedUntil('s-3'), START + 3000, 'an unknown session counts as overflowed');
  assert.equal(set.revokedUntil('s-1'), START + 3000, 'the later of its own and the overflow');
  advance(HOLD - 1500);
  assert.equal(set.prune(), true, 's-1 aged out');
  assert.equal(set.overflowed(), true, 's-4 was revoked later: its tokens may still be honoured');
  advance(2500);
  assert.equal(set.prune(), true, 's-2 aged out and the overflow ended');
  assert.equal(set.overflowed(), false, 'every token of s-3 and s-4 has expired by now');
  assert.deepEqual(set.entries(), []);
  assert.equal(set.revokedUntil('s-3'), undefined);
  assert.equal(set.revoke('s-5', START + HOLD + 3000), true, 'room again: back to entries');
  assert.equal(set.revoke('s-6', START + HOLD + 3000), true);
  assert.equal(set.overflowed(), false);
});

test('a full set first drops what aged out, so a revocation then fits without overflowing', () => {
  const { set, advance } = clocked(1);
  set.revoke('s-1', START);
  advance(HOLD);
  assert.equal(set.revoke('s-2', START + HOLD), true);
  assert.equal(set.overflowed(), false);
  assert.deepEqual(
    set.entries().map((entry) => entry.sid),
    ['s-2'],
  );
});

test('revokeAll refuses every token up to its notBefore; a lost feed refuses all until it is back', () => {
  const { set, advance } = clocked();
  assert.equal(set.setFeedLost(true), true);
  assert.equal(set.overflowed(), true);
  assert.equal(set.revokedUntil('s-x'), Number.POSITIVE_INFINITY, 'mint nothing: revocations are unseen');
  advance(10 * HOLD);
  assert.equal(set.prune(), false, 'a lost feed never ages out');
  assert.equal(set.overflowed(), true);
  // Back: what was revoked meanwhile is unknown.
  const back = START + 10 * HOLD;
  assert.equal(set.setFeedLost(false), true);
  assert.equal(set.revokeAll(back + SKEW), true);
  assert.equal(set.overflowed(), true);
  assert.equal(set.revokedUntil('s-x'), back + SKEW);
  assert.equal(set.setFeedLost(true), false, 'already refusing everything');
  assert.equal(set.setFeedLost(false), false);
  advance(SKEW + HOLD);
  assert.equal(set.prune(), true);
  assert.equal(set.overflowed(), false);
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

test('a burst into a full set stays linear: pruning looks at the entries only once one may have expired', () => {
  const { set, advance } = clocked(10_000);
  const started = performance.now();
  for (let i = 0; i < 100_000; i++) set.revoke(`s-${i}`, START + SKEW);
  const tookMs = performance.now() - started;
  assert.equal(set.size, 10_000);
  assert.equal(set.overflowed(), true);
  assert.ok(tookMs < 2_000, `100,000 revocations took ${tookMs.toFixed(0)} ms`);
  advance(SKEW + HOLD);
  assert.equal(set.prune(), true);
  assert.equal(set.size, 0);
  assert.equal(set.overflowed(), false);
});

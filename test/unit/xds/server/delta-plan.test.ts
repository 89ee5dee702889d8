// The delta planner's quick path (diff against the previous plan) must plan exactly what a full
// pass would: checked directly on DeltaTypeState with hand-made prepared types.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeltaTypeState } from '../../../../src/xds/server/delta-state.js';
import type { PreparedResource, PreparedType } from '../../../../src/xds/server/prepared.js';
import { CLUSTER_TYPE } from '../../../../src/xds/codec/type-urls.js';

const made = new Map<string, PreparedResource>();
/** One prepared resource per name@version, shared like snapshots share unchanged resources. */
function resource(name: string, version: string): PreparedResource {
  const key = `${name}@${version}`;
  let found = made.get(key);
  if (found === undefined) {
    found = { name, version, bytes: new Uint8Array() };
    made.set(key, found);
  }
  return found;
}

function prepared(entries: Record<string, string>): PreparedType {
  const list = Object.entries(entries).map(([name, version]) => resource(name, version));
  return {
    type: CLUSTER_TYPE,
    typeUrl: 'type.googleapis.com/x',
    version: JSON.stringify(entries),
    list,
    byName: new Map(list.map((entry) => [entry.name, entry])),
    fullSotwBody: () => new Uint8Array(),
  };
}

/** A wildcard stream that was sent and ACKed `first`. */
function streamHolding(first: PreparedType): DeltaTypeState {
  const state = new DeltaTypeState(CLUSTER_TYPE);
  state.applySubscription({ subscribe: [], unsubscribe: [], initialVersions: new Map() });
  const plan = state.plan(first);
  state.markSent('1', plan.upserts, plan.removals);
  state.onAck('1');
  return state;
}

const names = (plan: { upserts: readonly PreparedResource[] }): string[] =>
  plan.upserts.map((r) => `${r.name}@${r.version}`);

test('after an ACKed plan, the next plan holds only what changed, was added or was removed', () => {
  const state = streamHolding(prepared({ a: '1', b: '1', c: '1', d: '1' }));
  const plan = state.plan(prepared({ a: '1', b: '2', c: '1', e: '1' }));
  assert.deepEqual(names(plan), ['b@2', 'e@1']);
  assert.deepEqual(plan.removals, ['d']);
});

test('a NACKed version is not sent again by the quick path, and a newer one is', () => {
  const state = streamHolding(prepared({ a: '1', b: '1' }));
  const plan = state.plan(prepared({ a: '2', b: '1' }));
  state.markSent('2', plan.upserts, plan.removals);
  state.onNack('2');
  assert.deepEqual(names(state.plan(prepared({ a: '2', b: '1' }))), [], 'rejected a@2 is not resent');
  const next = state.plan(prepared({ a: '3', b: '1' }));
  assert.deepEqual(names(next), ['a@3']);
});

test('unsent plans are not double-sent: an update in flight is not planned again', () => {
  const state = streamHolding(prepared({ a: '1' }));
  const plan = state.plan(prepared({ a: '2' }));
  state.markSent('2', plan.upserts, plan.removals);
  assert.deepEqual(names(state.plan(prepared({ a: '2', b: '1' }))), ['b@1']);
});

test('lists out of name order fall back to the full plan, with the same answer', () => {
  const state = streamHolding(prepared({ a: '1', b: '1' }));
  const plan = state.plan(prepared({ c: '1', a: '2', b: '1' }));
  assert.deepEqual(names(plan).sort(), ['a@2', 'c@1']);
  assert.deepEqual(plan.removals, []);
});

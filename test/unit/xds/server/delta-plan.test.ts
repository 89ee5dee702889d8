// The delta planner's quick path (diff against the previous plan) must plan exactly what a full
// pass would: checked directly on DeltaTypeState with hand-made prepared types.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeltaTypeState } from '../../../../src/xds/server/delta-state.js';
import type { PreparedResource, PreparedType } from '../../../../src/xds/server/prepared.js';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  type ResourceType,
} from '../../../../src/proto/type-urls.js';
import { seededRandom } from '../../../support/seeded-random.js';

/** A prepared type holding `entries` (name -> version), as fresh objects sorted by name. */
function prepared(entries: Record<string, string>, type: ResourceType = CLUSTER_TYPE): PreparedType {
  const list = Object.entries(entries)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, version]): PreparedResource => ({ name, version, bytes: new Uint8Array() }));
  return {
    type,
    typeUrl: 'type.googleapis.com/x',
    version: JSON.stringify(list.map((entry) => [entry.name, entry.version])),
    list,
    byName: new Map(list.map((entry) => [entry.name, entry])),
    fullSotwBody: () => new Uint8Array(),
  };
}

/** `next` naming every name whose resource differs from `base`'s (PreparedType.changes). */
function withChangesFrom(base: PreparedType, next: PreparedType): PreparedType {
  const all = new Set([...base.byName.keys(), ...next.byName.keys()]);
  const names = [...all]
    .filter((name) => base.byName.get(name)?.version !== next.byName.get(name)?.version)
    .sort();
  return { ...next, changes: { from: base.version, names } };
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

test('a snapshot naming its changes since the last plan is planned from those names only', () => {
  const first = prepared({ a: '1', b: '1', c: '1', d: '1' });
  const state = streamHolding(first);
  const next = prepared({ a: '1', b: '2', c: '1', e: '1' });
  // `a` is named but unchanged; `c` changed is not named: the names are believed (only they are looked at).
  const plan = state.plan({ ...next, changes: { from: first.version, names: ['a', 'b', 'd', 'e'] } });
  assert.deepEqual(names(plan), ['b@2', 'e@1']);
  assert.deepEqual(plan.removals, ['d']);
  // Named from another version than the last plan's: everything is compared.
  const other = streamHolding(first);
  const full = other.plan({ ...next, changes: { from: 'elsewhere', names: [] } });
  assert.deepEqual(names(full), ['b@2', 'e@1']);
});

test('resources are compared by name and version, not by object: a fresh equal snapshot plans nothing', () => {
  const state = streamHolding(prepared({ a: '1', b: '1' }));
  const plan = state.plan(prepared({ c: '1', a: '2', b: '1' }));
  assert.deepEqual(names(plan).sort(), ['a@2', 'c@1']);
  assert.deepEqual(plan.removals, []);
  state.markSent('2', plan.upserts, plan.removals);
  state.onAck('2');
  const again = state.plan(prepared({ a: '2', b: '1', c: '1' }));
  assert.deepEqual([names(again), again.removals], [[], []]);
});

test('named subscribes and unsubscribes keep the plan incremental, with what a full plan gives (1,500 random steps)', () => {
  const random = seededRandom(20261122);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const universe = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
  for (const type of [CLUSTER_TYPE, CLUSTER_LOAD_ASSIGNMENT_TYPE] as const) {
    const incremental = new DeltaTypeState(type);
    const reference = new DeltaTypeState(type, false);
    let current: Record<string, string> = {};
    let previous = prepared({}, type);
    let nonce = 0;
    const pending: string[] = [];
    const both = (call: (state: DeltaTypeState) => void): void => {
      call(incremental);
      call(reference);
    };
    const first = type === CLUSTER_TYPE ? [] : ['a', 'b'];
    both((state) =>
      state.applySubscription({ subscribe: first, unsubscribe: [], initialVersions: new Map() }),
    );
    for (let step = 0; step < 1500; step++) {
      const roll = random();
      if (roll < 0.3) {
        const next = { ...current };
        for (const name of universe) {
          const change = random();
          if (change < 0.15) delete next[name];
          else if (change < 0.35) next[name] = String(Math.floor(random() * 4));
        }
        current = Object.fromEntries(Object.entries(next).sort(([x], [y]) => (x < y ? -1 : 1)));
      } else if (roll < 0.5) {
        const wildcardOps = type === CLUSTER_TYPE && random() < 0.1 ? ['*'] : [];
        const subscribe = random() < 0.5 ? [...wildcardOps, pick(universe)] : [];
        const unsubscribe = subscribe.length === 0 ? [random() < 0.1 ? '*' : pick(universe)] : [];
        if (type !== CLUSTER_TYPE && unsubscribe[0] === '*') unsubscribe[0] = pick(universe);
        both((state) => state.applySubscription({ subscribe, unsubscribe, initialVersions: new Map() }));
      } else if (roll < 0.75 && pending.length > 0) {
        // Envoy answers the responses of one stream in the order they were sent.
        const answered = pending.shift() as string;
        const nack = random() < 0.2;
        both((state) => (nack ? state.onNack(answered) : state.onAck(answered)));
      }
      // Half the snapshots name what changed since the one before (PreparedType.changes), as
      // snapshots assembled from a build delta do; the planner must give the same either way.
      const plain = prepared(current, type);
      const snapshot = random() < 0.5 ? withChangesFrom(previous, plain) : plain;
      previous = plain;
      const [got, want] = [incremental.plan(snapshot), reference.plan(snapshot)];
      const key = (plan: { upserts: readonly PreparedResource[]; removals: readonly string[] }): string =>
        JSON.stringify([names(plan).sort(), [...plan.removals].sort()]);
      assert.equal(key(got), key(want), `step ${step} (${type})`);
      if (got.upserts.length > 0 || got.removals.length > 0) {
        const sent = String(++nonce);
        incremental.markSent(sent, got.upserts, got.removals);
        reference.markSent(sent, want.upserts, want.removals);
        pending.push(sent);
      }
    }
  }
});

// The refresher with a shared session store: several instances refresh a session once (a lease in
// the store; the others follow the change feed or see the new tokens when they look), and a store
// outage never ends a session: it is kept and retried with backoff, and a refresh the IdP already
// granted is written when the store returns, without a second grant.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RefreshLease } from '../../../../src/authenticate/refresh/refresher.js';
import { leaseBusyDelay, retryDelay } from '../../../../src/authenticate/refresh/schedule.js';
import { openTokens } from '../../../../src/session/session-tokens.js';
import type { RefreshResult } from '../../../../src/authenticate/types.js';
import type { SessionStore } from '../../../../src/session/session.js';
import { memorySessionStore } from '../../../support/session-store.js';
import { failingSessions, outage } from '../failing-store.js';
import { MINUTE, START, provider, refresherIn, result, setup, until } from './fixture.js';

/** A provider whose grants wait for `answer` (the latest grant's resolver). */
function heldProvider() {
  const held: { answer: (value: RefreshResult) => void } = { answer: () => {} };
  const client = provider(() => new Promise((resolve) => (held.answer = resolve)));
  return { client, held };
}

test('two instances on one store: one refresh_token grant, both rescheduled from the new tokens', async () => {
  const { client, held } = heldProvider();
  const world = await setup(client, () => 0.5, { lease: (backend) => backend });
  const otherStore = memorySessionStore({ now: () => world.clock.now, backend: world.backend });
  const other = refresherIn(world, client, { sessions: otherStore, lease: world.backend });
  world.refresher.track(world.session);
  other.track(world.session);
  assert.deepEqual(world.clock.dueTimes, [START + 4 * MINUTE, START + 4 * MINUTE]);
  world.clock.advanceTo(START + 4 * MINUTE);
  await until(() => client.calls.length > 0 && world.clock.timers === 1);
  assert.equal(client.calls.length, 1, 'one grant while the lease is held');
  assert.deepEqual(world.clock.dueTimes, [START + 4 * MINUTE + leaseBusyDelay(0.5)], 'the other waits');
  held.answer(result(world.clock));
  const next = START + 13 * MINUTE;
  await until(() => world.clock.dueTimes.join() === `${next},${next}`);
  assert.deepEqual(world.clock.dueTimes, [next, next], 'both follow the refreshed tokens (the feed)');
  assert.equal(client.calls.length, 1);
  world.refresher.close();
  other.close();
  otherStore.close();
});

test('an instance that missed the feed sees the new tokens under the lease and does not ask the IdP', async () => {
  const { client, held } = heldProvider();
  const world = await setup(client, () => 0.5, { lease: (backend) => backend });
  const otherStore = memorySessionStore({ now: () => world.clock.now, backend: world.backend });
  const deaf: SessionStore = {
    get: (id) => otherStore.get(id),
    put: (session) => otherStore.put(session),
    delete: (id) => otherStore.delete(id),
    onInvalidate: () => () => {},
  };
  const other = refresherIn(world, client, { sessions: deaf, lease: world.backend });
  world.refresher.track(world.session);
  other.track(world.session);
  world.clock.advanceTo(START + 4 * MINUTE);
  await until(() => client.calls.length > 0 && world.clock.timers === 1);
  held.answer(result(world.clock));
  await until(() => world.clock.timers === 2);
  world.clock.advanceTo(START + 4 * MINUTE + leaseBusyDelay(0.5));
  assert.equal(await other.refresh(world.session.id), 'refreshed', 'joins the retry the timer started');
  assert.equal(client.calls.length, 1, 'no second grant');
  assert.deepEqual(world.clock.dueTimes, [START + 13 * MINUTE, START + 13 * MINUTE]);
  world.refresher.close();
  other.close();
  otherStore.close();
});

test('store unavailable when the refresh reads the session: kept, retried with backoff, refreshed later', async () => {
  let failing: ReturnType<typeof failingSessions> | undefined;
  const client = provider(() => Promise.resolve(result(world.clock)));
  const world = await setup(client, () => 0.5, {
    sessions: (store) => (failing = failingSessions(store, { get: true })),
  });
  assert.ok(failing !== undefined);
  world.refresher.track(world.session);
  world.clock.advanceTo(START + 4 * MINUTE);
  assert.equal(await world.refresher.refresh(world.session.id), 'kept');
  assert.ok(await world.sessions.get(world.session.id), 'the session is not ended');
  assert.equal(client.calls.length, 0);
  assert.deepEqual(world.clock.dueTimes, [START + 4 * MINUTE + retryDelay(0, 0.5)]);
  const warned = world.logger.records.find(
    (record) => record.msg?.startsWith('session store unavailable') === true,
  );
  assert.equal(warned?.level, 'warn');
  assert.equal((warned?.obj as { code?: string }).code, 'STORE_UNAVAILABLE');
  failing.fail.get = false;
  world.clock.advanceTo(START + 4 * MINUTE + retryDelay(0, 0.5));
  assert.equal(await world.refresher.refresh(world.session.id), 'refreshed');
  assert.equal(client.calls.length, 1);
  world.refresher.close();
});

test('store unavailable when writing the refreshed session: written on the next try without a second grant', async () => {
  let failing: ReturnType<typeof failingSessions> | undefined;
  const client = provider(() => Promise.resolve(result(world.clock, { refreshToken: 'rt-2' })));
  const world = await setup(client, () => 0.5, {
    sessions: (store) => (failing = failingSessions(store, { put: true })),
  });
  assert.ok(failing !== undefined);
  world.refresher.track(world.session);
  world.clock.advanceTo(START + 4 * MINUTE);
  assert.equal(await world.refresher.refresh(world.session.id), 'kept');
  assert.equal(client.calls.length, 1);
  assert.equal((await world.sessions.get(world.session.id))?.tokens?.sealed, world.session.tokens?.sealed);
  failing.fail.put = false;
  world.clock.advanceTo(START + 4 * MINUTE + retryDelay(0, 0.5));
  assert.equal(await world.refresher.refresh(world.session.id), 'refreshed');
  assert.equal(client.calls.length, 1, 'the rotated refresh token was not lost: no second grant');
  const stored = await world.sessions.get(world.session.id);
  assert.ok(stored?.tokens !== undefined);
  assert.equal((await openTokens(world.secret, stored.id, stored.tokens)).refreshToken, 'rt-2');
  world.refresher.close();
});

test('a lease the store cannot give, or a changed session it cannot read, keeps the session tracked', async () => {
  const down: RefreshLease = {
    acquireLease: () => Promise.reject(outage()),
    releaseLease: () => Promise.resolve(),
  };
  const client = provider(() => Promise.resolve(result(world.clock)));
  const world = await setup(client, () => 0.5, { lease: () => down });
  world.refresher.track(world.session);
  world.clock.advanceTo(START + 4 * MINUTE);
  assert.equal(await world.refresher.refresh(world.session.id), 'kept');
  assert.equal(client.calls.length, 0);
  assert.ok(world.refresher.isTracked(world.session.id), 'retried, not dropped');

  let failing: ReturnType<typeof failingSessions> | undefined;
  const second = await setup(client, () => 0.5, {
    sessions: (store) => (failing = failingSessions(store, { get: true })),
  });
  second.refresher.track(second.session);
  await second.sessions.put({ ...second.session, name: 'Ada L.' });
  await until(() => failing?.calls.length === 1 && second.refresher.isTracked(second.session.id));
  assert.ok(second.refresher.isTracked(second.session.id), 'an unreadable change does not untrack it');
  assert.deepEqual(second.clock.dueTimes, [START + retryDelay(0, 0.5)]);
  world.refresher.close();
  second.refresher.close();
});

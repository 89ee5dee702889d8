// The session refresher on a fake clock with a fake ProviderClient: refreshes before the tokens
// expire, one IdP call per session however many ask, a refusal ends the session, an outage keeps
// it and retries with backoff, and a session deleted from the store loses its timer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RETRY_BASE_MS, nextRefreshAt, retryDelay } from '../../../../src/authenticate/refresh/schedule.js';
import { openTokens, sealTokens } from '../../../../src/session/session-tokens.js';
import { IdpError } from '../../../../src/authenticate/types.js';
import type { RefreshResult } from '../../../../src/authenticate/types.js';
import { MINUTE, START, provider, result, setup, until } from './fixture.js';

test('schedule: one minute before the earlier expiry, not within 10 s of the last refresh, never after the end', () => {
  const base = { lastRefreshAt: START, expiresAt: START + 60 * MINUTE };
  assert.equal(
    nextRefreshAt({
      ...base,
      accessTokenExpiresAt: START + 5 * MINUTE,
      idTokenExpiresAt: START + 9 * MINUTE,
    }),
    START + 4 * MINUTE,
  );
  assert.equal(
    nextRefreshAt({ ...base, accessTokenExpiresAt: undefined, idTokenExpiresAt: START + 9 * MINUTE }),
    START + 8 * MINUTE,
  );
  assert.equal(
    nextRefreshAt({ ...base, accessTokenExpiresAt: START + 30_000, idTokenExpiresAt: undefined }),
    START + 10_000,
  );
  assert.equal(
    nextRefreshAt({ ...base, accessTokenExpiresAt: undefined, idTokenExpiresAt: undefined }),
    undefined,
  );
  assert.equal(
    nextRefreshAt({ ...base, accessTokenExpiresAt: START + 61 * MINUTE, idTokenExpiresAt: undefined }),
    undefined,
  );
});

test('retry delays double up to the cap, with jitter inside [half, whole]', () => {
  assert.equal(retryDelay(0, 0), RETRY_BASE_MS / 2);
  assert.equal(retryDelay(0, 0.999999), Math.round(RETRY_BASE_MS * 0.9999995));
  assert.equal(retryDelay(3, 0), 4 * RETRY_BASE_MS);
  assert.equal(retryDelay(50, 0), 150_000);
  assert.ok(retryDelay(50, 0.99) <= 300_000);
});

test('refreshes before expiry: new tokens sealed, old refresh token kept, claims merged, expiry unchanged', async () => {
  const client = provider(() => Promise.resolve(result(clock)));
  const { clock, sessions, secret, session, refresher } = await setup(client);
  refresher.track(session);
  assert.equal(clock.next, START + 4 * MINUTE, 'one minute before the access token expires');
  clock.advanceTo(START + 4 * MINUTE - 1);
  assert.equal(client.calls.length, 0);
  clock.advanceTo(START + 4 * MINUTE);
  assert.equal(await refresher.refresh(session.id), 'refreshed', 'joins the refresh the timer started');
  assert.deepEqual(client.calls, ['rt-1'], 'one refresh-token grant');
  const after = await sessions.get(session.id);
  assert.ok(after?.tokens);
  assert.deepEqual(await openTokens(secret, session.id, after.tokens), {
    accessToken: 'at-2',
    refreshToken: 'rt-1',
    idToken: 'id-2',
  });
  assert.equal(after.expiresAt, session.expiresAt);
  assert.deepEqual(after.claims, { sub: 'user-1', email: 'ada@example.com', groups: ['new-group'] });
  assert.deepEqual(after.groups, ['new-group']);
  assert.equal(clock.next, START + 13 * MINUTE, 'the next one before the new tokens expire');
  refresher.close();
  assert.equal(clock.timers, 0, 'close clears every timer');
});

test('single flight: two concurrent refreshes make one IdP call and share the outcome', async () => {
  let answer: (value: RefreshResult) => void = () => {};
  const client = provider(() => new Promise((resolve) => (answer = resolve)));
  const { refresher, session, clock } = await setup(client);
  const first = refresher.refresh(session.id);
  const second = refresher.refresh(session.id);
  await until(() => client.calls.length > 0);
  assert.equal(client.calls.length, 1);
  answer(result(clock));
  assert.deepEqual(await Promise.all([first, second]), ['refreshed', 'refreshed']);
  assert.equal(client.calls.length, 1);
  refresher.close();
});

test('an IdP that refuses the refresh ends the session', async () => {
  const client = provider(() => Promise.reject(new IdpError('refused', 'invalid_grant')));
  const { refresher, session, sessions, clock } = await setup(client);
  refresher.track(session);
  clock.advanceTo(START + 4 * MINUTE);
  assert.equal(await refresher.refresh(session.id), 'ended');
  assert.equal(await sessions.get(session.id), undefined);
  assert.equal(clock.timers, 0);
  refresher.close();
});

test('an IdP that is down keeps the session and retries with growing delays until it works', async () => {
  let down = 3;
  const client = provider(() =>
    down-- > 0 ? Promise.reject(new IdpError('unavailable', 'timeout')) : Promise.resolve(result(clock)),
  );
  const { refresher, session, sessions, clock, logger } = await setup(client);
  refresher.track(session);
  clock.advanceTo(START + 4 * MINUTE);
  assert.equal(await refresher.refresh(session.id), 'kept');
  assert.ok(await sessions.get(session.id), 'kept');
  const delays: number[] = [];
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const next = clock.next;
    assert.ok(next !== undefined);
    delays.push(next - clock.now);
    clock.advanceTo(next);
    await refresher.refresh(session.id);
  }
  assert.deepEqual(delays, [retryDelay(0, 0.5), retryDelay(1, 0.5), retryDelay(2, 0.5)]);
  assert.equal(client.calls.length, 4);
  assert.equal((await sessions.get(session.id))?.claims.groups?.toString(), 'new-group', 'finally refreshed');
  assert.ok(
    logger.records.some((record) => record.level === 'warn' && record.msg === 'refresh failed; will retry'),
  );
  refresher.close();
});

test('retries stop at the session end', async () => {
  const client = provider(() => Promise.reject(new IdpError('unavailable', 'down')));
  const { refresher, session, clock } = await setup(client);
  clock.now = session.expiresAt - 1_000;
  assert.equal(await refresher.refresh(session.id), 'kept');
  assert.equal(clock.timers, 0, 'no retry after the session ends');
  refresher.close();
});

test('a session deleted from the store loses its timer; one signed out mid-refresh is not brought back', async () => {
  let answer: (value: RefreshResult) => void = () => {};
  const client = provider(() => new Promise((resolve) => (answer = resolve)));
  const { refresher, session, sessions, clock } = await setup(client);
  refresher.track(session);
  assert.ok(refresher.isTracked(session.id));
  await sessions.delete(session.id);
  assert.equal(refresher.isTracked(session.id), false);
  assert.equal(clock.timers, 0);

  await sessions.put(session);
  const running = refresher.refresh(session.id);
  await until(() => client.calls.length > 0);
  await sessions.delete(session.id);
  answer(result(clock));
  assert.equal(await running, 'ended');
  assert.equal(await sessions.get(session.id), undefined, 'sign-out wins over a racing refresh');
  refresher.close();
});

test('sessions without a refresh token are not tracked; a replaced session is rescheduled from the store', async () => {
  const { refresher, session, sessions, clock, secret } = await setup(
    provider(() => Promise.reject(new Error('unused'))),
  );
  const { tokens: _tokens, ...withoutTokens } = session;
  refresher.track(withoutTokens);
  assert.equal(clock.timers, 0);
  refresher.track(session);
  const later = await sealTokens(secret, session.id, {
    accessToken: 'at-x',
    refreshToken: 'rt-x',
    idToken: undefined,
    accessTokenExpiresAt: START + 30 * MINUTE,
    idTokenExpiresAt: undefined,
  });
  await sessions.put({ ...session, tokens: later });
  await until(() => clock.next === START + 29 * MINUTE);
  assert.equal(clock.next, START + 29 * MINUTE);
  assert.equal(clock.timers, 1);
  refresher.close();
});

// The services report to Telemetry where the events happen: the IdP callback counts a sign-in
// success once the session is stored and a failure for every error page, sign-out counts the
// sessions it ends, the refresher each refresh's outcome once (callers that join share it), and
// the session store each call that failed with StoreUnavailableError, by operation.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { callbackHandler } from '../../../src/authenticate/http/callback.js';
import { dispatch } from '../../../src/authenticate/http/router.js';
import { signInHandler } from '../../../src/authenticate/http/sign-in.js';
import { signOutToken } from '../../../src/authenticate/pages/sign-out-token.js';
import { SessionRefresher } from '../../../src/authenticate/refresh/refresher.js';
import { IdpError } from '../../../src/authenticate/types.js';
import type { Telemetry } from '../../../src/contract/telemetry.js';
import { RecordSessionStore } from '../../../src/databroker/record-session-store.js';
import { SealedRecords } from '../../../src/databroker/sealed-records.js';
import type { Session } from '../../../src/session/session.js';
import { silentLogger } from '../../../src/shared/logger.js';
import { unreachableBackend } from '../authenticate/failing-store.js';
import {
  AUTH_URL,
  CALLBACK_PATH,
  IDP_A,
  harness,
  location,
  ownRequest,
  setCookies,
} from '../authenticate/http/harness.js';
import { IDP, provider, result, setup } from '../authenticate/refresh/fixture.js';

/** A Telemetry that records every call as `method:argument`. */
function recording(): Telemetry & { readonly calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    decision: (outcome) => calls.push(`decision:${outcome}`),
    signIn: (outcome) => calls.push(`signIn:${outcome}`),
    refresh: (outcome) => calls.push(`refresh:${outcome}`),
    signOut: () => calls.push('signOut'),
    storeError: (operation) => calls.push(`storeError:${operation}`),
  };
}

test('the callback counts a success once the session is stored, and a failure for each error page', async () => {
  const h = harness();
  const telemetry = recording();
  const context = { ...h.context, telemetry };
  const original = 'https://app.test:8443/';
  const started = await signInHandler(
    ownRequest(`${AUTH_URL}/.portcullis/sign_in?portcullis_redirect_uri=${encodeURIComponent(original)}`),
    context,
  );
  const state = location(started).searchParams.get('state') ?? '';
  const [flow] = [...setCookies(started).values()];
  assert.ok(flow?.value !== undefined);
  const callback = (params: Record<string, string>) => {
    const url = new URL(CALLBACK_PATH, AUTH_URL);
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return callbackHandler(ownRequest(url.href, { cookies: { [flow.name]: flow.value ?? '' } }), context);
  };
  assert.equal((await callback({ state: 'not-a-state', code: 'good-code' })).status, 400);
  assert.equal((await callback({ state, error: 'access_denied' })).status, 401);
  assert.deepEqual(telemetry.calls, ['signIn:failure', 'signIn:failure']);
  assert.equal((await callback({ state, code: 'good-code' })).status, 302);
  assert.deepEqual(telemetry.calls, ['signIn:failure', 'signIn:failure', 'signIn:success']);
  assert.equal((await callback({ state, code: 'good-code' })).status, 400, 'a replayed answer');
  assert.equal(telemetry.calls.at(-1), 'signIn:failure');
  assert.equal(telemetry.calls.length, 4);
});

test('sign-out counts the session it ended, and nothing when there was none', async () => {
  const h = harness();
  const telemetry = recording();
  const context = { ...h.context, telemetry };
  const session: Session = {
    id: 'session-1',
    userId: 'alice',
    email: undefined,
    emailVerified: false,
    name: undefined,
    groups: [],
    claims: { sub: 'alice' },
    issuedAt: h.clock.now,
    expiresAt: h.clock.now + 3_600_000,
    idpId: IDP_A,
  };
  await h.sessions.put(session);
  const url = `https://app.test:8443/.portcullis/sign_out?portcullis_csrf=${signOutToken(h.settings.sharedSecret, session.id)}`;
  await dispatch(ownRequest(url, { method: 'POST', sessionHandle: h.handles.issue(session.id) }), context);
  assert.deepEqual(telemetry.calls, ['signOut']);
  await dispatch(ownRequest(url, { method: 'POST', sessionHandle: h.handles.issue(session.id) }), context);
  assert.deepEqual(telemetry.calls, ['signOut'], 'the session was already gone');
});

test('the refresher counts each refresh once with its outcome', async () => {
  let answer: () => Promise<ReturnType<typeof result>> = () =>
    Promise.reject(new IdpError('unavailable', 'down'));
  const client = provider(() => answer());
  const world = await setup(client);
  const telemetry = recording();
  const refresher = new SessionRefresher({
    sessions: world.sessions,
    provider: (id) => (id === IDP ? client : undefined),
    sharedSecret: () => world.secret,
    now: () => world.clock.now,
    logger: world.logger,
    timers: world.clock,
    random: () => 0.5,
    telemetry,
  });
  refresher.track(world.session);
  assert.deepEqual(
    await Promise.all([refresher.refresh(world.session.id), refresher.refresh(world.session.id)]),
    ['kept', 'kept'],
  );
  assert.deepEqual(telemetry.calls, ['refresh:kept'], 'two callers, one refresh');
  answer = () => Promise.resolve(result(world.clock));
  assert.equal(await refresher.refresh(world.session.id), 'refreshed');
  answer = () => Promise.reject(new IdpError('refused', 'invalid_grant'));
  assert.equal(await refresher.refresh(world.session.id), 'ended');
  assert.deepEqual(telemetry.calls, ['refresh:kept', 'refresh:refreshed', 'refresh:ended']);
  refresher.close();
});

test('the session store counts calls that failed because the store is unreachable, by operation', async () => {
  const telemetry = recording();
  const backend = unreachableBackend();
  const secret = new Uint8Array(32).fill(7);
  const store = new RecordSessionStore(
    new SealedRecords(backend, { secret: () => secret, logger: silentLogger }),
    {
      outageGraceMs: 0,
      logger: silentLogger,
      telemetry,
    },
  );
  const session: Session = {
    id: 's',
    userId: 'u',
    email: undefined,
    emailVerified: false,
    name: undefined,
    groups: [],
    claims: {},
    issuedAt: Date.now(),
    expiresAt: Date.now() + 60_000,
    idpId: 'idp',
  };
  await assert.rejects(store.get('s'), { code: 'STORE_UNAVAILABLE' });
  await assert.rejects(store.put(session), { code: 'STORE_UNAVAILABLE' });
  await assert.rejects(store.delete('s'), { code: 'STORE_UNAVAILABLE' });
  assert.deepEqual(telemetry.calls, ['storeError:get', 'storeError:put', 'storeError:delete']);
  store.close();
});

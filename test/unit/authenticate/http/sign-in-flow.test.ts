// The sign-in handlers end to end without sockets, on a fake clock with a fake IdP client:
// sign_in -> callback -> handoff, and each way it must fail safely (no session, a clear page).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { callbackHandler } from '../../../../src/authenticate/http/callback.js';
import { handoffHandler, handoffLocation } from '../../../../src/authenticate/http/handoff.js';
import { signInHandler } from '../../../../src/authenticate/http/sign-in.js';
import { IdpError } from '../../../../src/authenticate/types.js';
import type { OwnResponse } from '../../../../src/authenticate/http/types.js';
import {
  AUTH_URL,
  CALLBACK_PATH,
  IDP_A,
  harness,
  location,
  ownRequest,
  setCookies,
  type Harness,
} from './harness.js';

const ORIGINAL = 'https://app.test:8443/docs/page?x=1';

interface Started {
  readonly idpUrl: URL;
  readonly state: string;
  readonly cookieName: string;
  readonly cookieValue: string;
}

async function startSignIn(h: Harness, original = ORIGINAL, sessionHandle?: string): Promise<Started> {
  const url = `${AUTH_URL}/.portcullis/sign_in?portcullis_redirect_uri=${encodeURIComponent(original)}`;
  const response = await signInHandler(
    ownRequest(url, sessionHandle === undefined ? {} : { sessionHandle }),
    h.context,
  );
  assert.equal(response.status, 302, response.body);
  const idpUrl = location(response);
  const [cookie] = [...setCookies(response).values()];
  assert.ok(cookie !== undefined && cookie.value !== undefined);
  return {
    idpUrl,
    state: idpUrl.searchParams.get('state') ?? '',
    cookieName: cookie.name,
    cookieValue: cookie.value,
  };
}

function callback(
  h: Harness,
  started: Started,
  params: Record<string, string>,
  cookies?: Record<string, string>,
): Promise<OwnResponse> {
  const url = new URL(CALLBACK_PATH, AUTH_URL);
  for (const [name, value] of Object.entries({ state: started.state, ...params }))
    url.searchParams.set(name, value);
  return callbackHandler(
    ownRequest(url.href, { cookies: cookies ?? { [started.cookieName]: started.cookieValue } }),
    h.context,
  );
}

/** Sessions made so far: the callback logs one "signed in" line per session it stores. */
function sessionCount(h: Harness): number {
  return h.logger.records.filter((record) => record.msg === 'signed in').length;
}

test('sign-in starts one flow: the IdP URL with state and nonce, and a per-flow cookie', async () => {
  const h = harness();
  const started = await startSignIn(h);
  assert.equal(started.idpUrl.origin, 'https://idp.test');
  assert.equal(started.idpUrl.searchParams.get('redirect_uri'), `${AUTH_URL}${CALLBACK_PATH}`);
  assert.match(started.cookieName, /^_portcullis_flow_[0-9a-f-]{36}$/);
  const response = await signInHandler(
    ownRequest(`${AUTH_URL}/.portcullis/sign_in?portcullis_redirect_uri=${encodeURIComponent(ORIGINAL)}`),
    h.context,
  );
  const cookie = [...setCookies(response).values()][0];
  assert.equal(cookie?.path, CALLBACK_PATH);
  assert.equal(cookie?.maxAge, 600);
  assert.equal(cookie?.httpOnly, true);
  assert.equal(cookie?.secure, true);
  assert.equal(cookie?.sameSite, 'lax');
  assert.notEqual(cookie?.name, started.cookieName, 'a second sign-in (another tab) has its own cookie');
  const issued = h.providers.get(IDP_A)?.issued ?? [];
  assert.equal(issued.length, 2);
  assert.notEqual(issued[0]?.nonce, issued[1]?.nonce);
  assert.ok((issued[0]?.codeVerifier.length ?? 0) >= 43, 'a PKCE verifier of at least 43 characters');
});

test('the whole flow: callback stores a session and hands off to the route host, which sets its cookie', async () => {
  const h = harness();
  const started = await startSignIn(h);
  const answered = await callback(h, started, { code: 'good-code' });
  assert.equal(answered.status, 302, answered.body);
  const handoffUrl = location(answered);
  assert.equal(handoffUrl.origin, 'https://app.test:8443');
  assert.equal(handoffUrl.pathname, '/.portcullis/callback');
  const cookies = setCookies(answered);
  assert.equal(cookies.get(started.cookieName)?.maxAge, 0, 'the flow cookie is cleared');
  const authCookie = cookies.get('_portcullis');
  assert.ok(authCookie?.value !== undefined, "the authenticate host's session cookie");
  const sessionId = h.handles.verify(authCookie.value);
  assert.ok(sessionId !== undefined);
  const session = await h.sessions.get(sessionId);
  assert.ok(session !== undefined);
  assert.equal(session.userId, 'alice');
  assert.equal(session.idpId, IDP_A);
  assert.deepEqual(session.groups, ['admins', 'staff'], 'groups: strings only');
  assert.equal(session.expiresAt, h.clock.now + h.settings.cookie.expireMs);
  assert.ok(session.tokens !== undefined && !session.tokens.sealed.includes('refresh'), 'tokens are sealed');
  assert.ok(h.logger.records.some((r) => r.msg === 'signed in' && JSON.stringify(r.obj).includes('alice')));
  assert.ok(!JSON.stringify(h.logger.records).includes('access'), 'no token in the log');

  const landed = await handoffHandler(ownRequest(handoffUrl.href), h.context);
  assert.equal(landed.status, 302, landed.body);
  assert.equal(location(landed).href, ORIGINAL, 'back to the original URL, port included');
  const routeCookie = setCookies(landed).get('_portcullis');
  assert.equal(routeCookie?.value, authCookie.value);
  assert.equal(routeCookie?.maxAge, h.settings.cookie.expireMs / 1000);
  assert.equal(routeCookie?.path, '/');

  const again = await handoffHandler(ownRequest(handoffUrl.href), h.context);
  assert.equal(again.status, 400, 'a handoff is single use');
  assert.equal(again.setCookies.length, 0);
});

test('a replayed state is refused before the IdP is asked again', async () => {
  const h = harness();
  const started = await startSignIn(h);
  assert.equal((await callback(h, started, { code: 'good-code' })).status, 302);
  const replay = await callback(h, started, { code: 'good-code' });
  assert.equal(replay.status, 400);
  assert.match(replay.body, /already used/);
  assert.equal(h.providers.get(IDP_A)?.exchanges.length, 1);
  assert.ok(!setCookies(replay).has('_portcullis'));
});

test("a state bound to another flow's cookie (CSRF) or without its cookie is refused", async () => {
  const h = harness();
  const mine = await startSignIn(h);
  const theirs = await startSignIn(h);
  const swapped = await callback(h, mine, { code: 'good-code' }, { [mine.cookieName]: theirs.cookieValue });
  assert.equal(swapped.status, 400);
  assert.match(swapped.body, /CSRF/);
  const missing = await callback(h, mine, { code: 'good-code' }, {});
  assert.equal(missing.status, 400);
  assert.match(missing.body, /no cookie for this sign-in/);
  assert.equal(h.providers.get(IDP_A)?.exchanges.length, 0, 'the IdP is never asked');
  assert.equal(sessionCount(h), 0);
});

test("the IdP's error parameter is a page naming it, escaped, with a way to try again", async () => {
  const h = harness();
  const started = await startSignIn(h);
  const denied = await callback(h, started, {
    error: 'access_denied',
    error_description: '<script>x</script>',
  });
  assert.equal(denied.status, 401);
  assert.match(denied.body, /access_denied/);
  assert.ok(!denied.body.includes('<script>x'), 'escaped');
  assert.ok(denied.body.includes(ORIGINAL.replace('&', '&amp;')), 'a link back to the original URL');
  assert.equal(setCookies(denied).get(started.cookieName)?.maxAge, 0);
  const other = await callback(h, await startSignIn(h), { error: 'server_error' });
  assert.equal(other.status, 400);
  assert.equal(sessionCount(h), 0);
});

test('missing, tampered and expired states are 400 pages; an expired one offers the original URL', async () => {
  const h = harness();
  const started = await startSignIn(h);
  const none = await callbackHandler(ownRequest(`${AUTH_URL}${CALLBACK_PATH}?code=good-code`), h.context);
  assert.equal(none.status, 400);
  const tampered = await callback(
    h,
    { ...started, state: `${started.state.slice(0, -2)}xx` },
    { code: 'good-code' },
  );
  assert.equal(tampered.status, 400);
  h.clock.now += 11 * 60_000;
  const expired = await callback(h, started, { code: 'good-code' });
  assert.equal(expired.status, 400);
  assert.match(expired.body, /longer than 10 minutes/);
  assert.ok(expired.body.includes('https://app.test:8443/docs/page'));
  assert.equal(h.providers.get(IDP_A)?.exchanges.length, 0);
});

test('the IdP refusing or failing the code exchange makes no session: 401 and 502 pages', async () => {
  const h = harness();
  const bad = await callback(h, await startSignIn(h), { code: 'wrong-code' });
  assert.equal(bad.status, 401);
  const provider = h.providers.get(IDP_A);
  assert.ok(provider !== undefined);
  provider.failExchange = new IdpError('unavailable', 'token endpoint timed out');
  const down = await callback(h, await startSignIn(h), { code: 'good-code' });
  assert.equal(down.status, 502);
  assert.match(down.body, /timed out/);
  assert.ok(!setCookies(bad).has('_portcullis') && !setCookies(down).has('_portcullis'));
  provider.failExchange = new Error('a bug');
  await assert.rejects(
    callback(h, await startSignIn(h), { code: 'good-code' }),
    /a bug/,
    'the server turns it into a 500',
  );
});

test('sign-in refuses a URL no route serves (no open redirect), and a missing one', async () => {
  const h = harness();
  for (const target of ['https://evil.test/', 'https://auth.test/x', 'javascript:alert(1)', 'not a url']) {
    const url = `${AUTH_URL}/.portcullis/sign_in?portcullis_redirect_uri=${encodeURIComponent(target)}`;
    const response = await signInHandler(ownRequest(url), h.context);
    assert.equal(response.status, 400, target);
    assert.equal(response.setCookies.length, 0);
  }
  assert.equal((await signInHandler(ownRequest(`${AUTH_URL}/.portcullis/sign_in`), h.context)).status, 400);
  assert.equal(
    (await signInHandler(ownRequest(`${AUTH_URL}/.portcullis/sign_in`, { method: 'POST' }), h.context))
      .status,
    405,
  );
});

test('a live session of the same IdP goes straight to the handoff (SSO); another IdP signs in again', async () => {
  const h = harness();
  const started = await startSignIn(h);
  const answered = await callback(h, started, { code: 'good-code' });
  const handle = setCookies(answered).get('_portcullis')?.value ?? '';
  const sso = await signInHandler(
    ownRequest(
      `${AUTH_URL}/.portcullis/sign_in?portcullis_redirect_uri=${encodeURIComponent('https://app.test/other')}`,
      { sessionHandle: handle },
    ),
    h.context,
  );
  assert.equal(sso.status, 302);
  assert.equal(location(sso).origin, 'https://app.test');
  assert.equal(location(sso).pathname, '/.portcullis/callback');
  const landed = await handoffHandler(ownRequest(location(sso).href), h.context);
  assert.equal(location(landed).href, 'https://app.test/other');
  const otherIdp = await startSignIn(h, 'https://other.test/', handle);
  assert.equal(
    otherIdp.idpUrl.origin,
    'https://idp.test',
    'a session of IdP A does not open a route of IdP B',
  );
  h.clock.now += h.settings.cookie.expireMs;
  const expired = await startSignIn(h, ORIGINAL, handle);
  assert.equal(expired.idpUrl.origin, 'https://idp.test', 'an expired session signs in again');
});

test('an unknown IdP is 503 and an unavailable one 502, each with a retry link', async () => {
  const h = harness();
  h.providers.delete(IDP_A);
  const unknown = await signInHandler(
    ownRequest(`${AUTH_URL}/.portcullis/sign_in?portcullis_redirect_uri=${encodeURIComponent(ORIGINAL)}`),
    h.context,
  );
  assert.equal(unknown.status, 503);
  assert.match(unknown.body, /Try again/);
  const b = h.providers.get('idp-b');
  assert.ok(b !== undefined);
  b.failAuthorization = new IdpError('unavailable', 'discovery failed');
  const down = await signInHandler(
    ownRequest(
      `${AUTH_URL}/.portcullis/sign_in?portcullis_redirect_uri=${encodeURIComponent('https://other.test/')}`,
    ),
    h.context,
  );
  assert.equal(down.status, 502);
  assert.equal(down.setCookies.length, 0);
});

test('a handoff lands only on the host it was made for, and only while its session lives', async () => {
  const h = harness();
  const answered = await callback(h, await startSignIn(h), { code: 'good-code' });
  const handoffUrl = location(answered);
  const elsewhere = new URL(handoffUrl);
  elsewhere.host = 'other.test';
  const wrongHost = await handoffHandler(ownRequest(elsewhere.href), h.context);
  assert.equal(wrongHost.status, 400);
  assert.match(wrongHost.body, /another site/);
  h.clock.now += 61_000;
  const late = await handoffHandler(ownRequest(handoffUrl.href), h.context);
  assert.equal(late.status, 400);
  assert.match(late.body, /expired/);
  assert.equal(
    (await handoffHandler(ownRequest('https://app.test/.portcullis/callback'), h.context)).status,
    400,
  );
});

test('form_post providers: the flow cookie is SameSite=None and the callback reads the posted form', async () => {
  const h = harness();
  const provider = h.providers.get(IDP_A);
  assert.ok(provider !== undefined);
  Object.defineProperty(provider, 'formPost', { value: true });
  const response = await signInHandler(
    ownRequest(`${AUTH_URL}/.portcullis/sign_in?portcullis_redirect_uri=${encodeURIComponent(ORIGINAL)}`),
    h.context,
  );
  const cookie = [...setCookies(response).values()][0];
  assert.equal(cookie?.sameSite, 'none');
  assert.equal(cookie?.secure, true);
  const state = location(response).searchParams.get('state') ?? '';
  const posted = await callbackHandler(
    ownRequest(`${AUTH_URL}${CALLBACK_PATH}`, {
      method: 'POST',
      form: new URLSearchParams({ state, code: 'good-code' }),
      cookies: { [cookie?.name ?? '']: cookie?.value ?? '' },
    }),
    h.context,
  );
  assert.equal(posted.status, 302, posted.body);
  assert.equal(provider.exchanges[0]?.callback.searchParams.get('code'), 'good-code');
});

test('sign-in hands a session only to an origin Portcullis serves: scheme, host and port', async () => {
  const h = harness();
  const answered = await callback(h, await startSignIn(h), { code: 'good-code' });
  const handle = setCookies(answered).get('_portcullis')?.value ?? '';
  for (const target of [
    'http://app.test/',
    'http://app.test:8443/',
    'https://app.test:8081/',
    'https://other.test:8443/',
  ]) {
    const refused = await signInHandler(
      ownRequest(`${AUTH_URL}/.portcullis/sign_in?portcullis_redirect_uri=${encodeURIComponent(target)}`, {
        sessionHandle: handle,
      }),
      h.context,
    );
    assert.equal(refused.status, 400, `${target}: ${refused.status}`);
    assert.match(refused.body, /is not where Portcullis serves/);
    assert.equal(
      refused.headers.find(([name]) => name === 'location'),
      undefined,
    );
  }
  for (const target of ['https://app.test/x', 'https://app.test:8443/x', 'https://other.test/']) {
    const sso = await signInHandler(
      ownRequest(`${AUTH_URL}/.portcullis/sign_in?portcullis_redirect_uri=${encodeURIComponent(target)}`, {
        sessionHandle: handle,
      }),
      h.context,
    );
    assert.equal(sso.status, 302, `${target}: ${sso.body}`);
  }
});

test('a handoff for an origin Portcullis does not serve is refused whatever the Host header says', async () => {
  const h = harness();
  const answered = await callback(h, await startSignIn(h), { code: 'good-code' });
  const handle = setCookies(answered).get('_portcullis')?.value ?? '';
  // A handoff made for http://app.test:8081 (as the unfixed sign-in made), redeemed with that Host.
  const stray = await handoffLocation(h.context, handle, { kind: 'url', url: 'http://app.test:8081/' });
  const redeemed = await handoffHandler(ownRequest(stray), h.context);
  assert.equal(redeemed.status, 400, redeemed.body);
  assert.equal(redeemed.setCookies.length, 0, 'a cookie was set');
  // The Host port is not what binds a handoff: its served origin is, redeemed on its host name.
  const good = await handoffLocation(h.context, handle, { kind: 'url', url: 'https://app.test:8443/' });
  const otherPort = new URL(good);
  otherPort.port = '9443';
  assert.equal((await handoffHandler(ownRequest(otherPort.href), h.context)).status, 302);
});

test('a session stored before e-mail verification was recorded is not reused: the user signs in again (issue 33 item 7)', async () => {
  const h = harness();
  const started = await startSignIn(h);
  const answered = await callback(h, started, { code: 'good-code' });
  const handle = setCookies(answered).get('_portcullis')?.value ?? '';
  const id = h.handles.verify(handle) ?? '';
  const stored = await h.sessions.get(id);
  assert.equal(typeof stored?.emailVerified, 'boolean', 'a new session records the verdict');
  if (stored !== undefined) await h.sessions.put({ ...stored, emailVerified: undefined });
  const again = await startSignIn(h, ORIGINAL, handle);
  assert.equal(again.idpUrl.origin, 'https://idp.test', 'the old session went to the IdP, not to a handoff');
});

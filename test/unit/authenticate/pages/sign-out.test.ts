// Sign-out: only with the session's CSRF token; it ends the session at once (the old handle stops
// working), clears the cookie, revokes at the IdP without ever waiting long on it, and logs out
// at the IdP when it can.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  createSignOutHandler,
  signOutHandler,
  signedOutHandler,
  userJsonHandler,
} from '../../../../src/authenticate/pages/handlers.js';
import { signOutToken } from '../../../../src/authenticate/pages/sign-out-token.js';
import { IdpError } from '../../../../src/authenticate/types.js';
import { assertClearsCookie, fakeProvider, fixture, request, storeSession } from './fixture.js';

const SIGN_OUT = 'https://app.example.com:8443/.portcullis/sign_out';

test('GET with the valid token never signs out: it shows the confirmation, the session stays', async () => {
  const f = fixture({ provider: fakeProvider({ endSession: 'https://idp.test/session/end' }) });
  const session = await storeSession(f);
  const handle = f.handles.issue(session.id);
  const token = signOutToken(f.sharedSecret, session.id);
  const response = await signOutHandler(
    request({ url: `${SIGN_OUT}?portcullis_csrf=${token}`, handle }),
    f.context,
  );
  assert.equal(response.status, 200);
  assert.match(response.body, /<h1>Sign out\?<\/h1>/);
  assert.match(response.body, /method="post"/i);
  assert.deepEqual(response.setCookies, []);
  assert.ok(await f.sessions.get(session.id), 'the session is still there');
});

test('POST with the token in the query: session deleted, cookie cleared, refresh token revoked, RP-initiated logout', async () => {
  const provider = fakeProvider({ endSession: 'https://idp.test/session/end' });
  const f = fixture({ provider });
  const session = await storeSession(f);
  const handle = f.handles.issue(session.id);
  const token = signOutToken(f.sharedSecret, session.id);
  const response = await signOutHandler(
    request({ method: 'POST', url: `${SIGN_OUT}?portcullis_csrf=${token}`, handle }),
    f.context,
  );

  assert.equal(response.status, 302);
  const location = new URL(new Map(response.headers).get('location') ?? '');
  assert.equal(location.origin + location.pathname, 'https://idp.test/session/end');
  assert.equal(location.searchParams.get('id_token_hint'), 'id-token-1');
  assert.equal(
    location.searchParams.get('post_logout_redirect_uri'),
    'https://auth.example.com:8443/.portcullis/signed_out',
  );
  assertClearsCookie(response.setCookies);
  assert.equal(await f.sessions.get(session.id), undefined, 'the session is gone from the store');
  assert.deepEqual(provider.revoked, [['rt-1', 'refresh_token']]);
  const after = await userJsonHandler(
    request({ url: 'https://app.example.com:8443/.portcullis/user', handle }),
    f.context,
  );
  assert.equal(after.status, 401, 'the old cookie no longer works');
});

test('POST with the token in the form; no end-session endpoint: signout_redirect_url', async () => {
  const provider = fakeProvider({});
  const f = fixture({ provider, signoutRedirectUrl: 'https://www.example.com/bye' });
  const session = await storeSession(f, {}, { accessToken: 'at-only' });
  const response = await signOutHandler(
    request({
      method: 'POST',
      handle: f.handles.issue(session.id),
      form: { portcullis_csrf: signOutToken(f.sharedSecret, session.id) },
    }),
    f.context,
  );
  assert.equal(response.status, 302);
  assert.equal(new Map(response.headers).get('location'), 'https://www.example.com/bye');
  assertClearsCookie(response.setCookies);
  assert.deepEqual(
    provider.revoked,
    [['at-only', 'access_token']],
    'the access token when there is no refresh token',
  );
  assert.equal(await f.sessions.get(session.id), undefined);
});

test('neither end-session nor signout_redirect_url: the signed-out page', async () => {
  const f = fixture({ provider: fakeProvider({}) });
  const session = await storeSession(f);
  const response = await signOutHandler(
    request({
      method: 'POST',
      handle: f.handles.issue(session.id),
      form: { portcullis_csrf: signOutToken(f.sharedSecret, session.id) },
    }),
    f.context,
  );
  assert.equal(response.status, 200);
  assert.match(response.body, /<h1>Signed out<\/h1>/);
  assertClearsCookie(response.setCookies);
});

test('GET without the token: a confirmation page whose POST form carries it; nothing ends', async () => {
  const provider = fakeProvider({ endSession: 'https://idp.test/end' });
  const f = fixture({ provider });
  const session = await storeSession(f, { name: '<img src=x onerror=alert(1)>' });
  const response = await signOutHandler(request({ handle: f.handles.issue(session.id) }), f.context);
  assert.equal(response.status, 200);
  assert.deepEqual(response.setCookies, []);
  assert.match(response.body, /<form method="post" action="\/.portcullis\/sign_out">/);
  assert.ok(
    response.body.includes(`name="portcullis_csrf" value="${signOutToken(f.sharedSecret, session.id)}"`),
  );
  assert.match(response.body, /<button type="submit">Sign out<\/button>/);
  assert.ok(response.body.includes('&lt;img src=x onerror=alert(1)&gt;'));
  assert.ok(!response.body.includes('<img'));
  assert.ok(await f.sessions.get(session.id), 'the session is kept');
  assert.deepEqual(provider.revoked, []);
});

test('POST with a missing or wrong token is refused (403) and the session stays', async () => {
  const f = fixture({ provider: fakeProvider({}) });
  const session = await storeSession(f);
  const other = await storeSession(f, { id: 'session-2' });
  const handle = f.handles.issue(session.id);
  for (const form of [
    {},
    { portcullis_csrf: 'nope' },
    { portcullis_csrf: signOutToken(f.sharedSecret, other.id) },
  ]) {
    const response = await signOutHandler(request({ method: 'POST', handle, form }), f.context);
    assert.equal(response.status, 403, JSON.stringify(form));
    assert.match(
      response.body,
      /sign-out refused: the request did not carry this session&#39;s sign-out token/,
    );
    assert.match(response.body, /req-123/);
    assert.deepEqual(response.setCookies, []);
  }
  // A GET with a wrong token is only shown the confirmation.
  const get = await signOutHandler(request({ url: `${SIGN_OUT}?portcullis_csrf=nope`, handle }), f.context);
  assert.equal(get.status, 200);
  assert.match(get.body, /<h1>Sign out\?<\/h1>/);
  assert.ok(await f.sessions.get(session.id));
});

test('no session (none, forged or expired): the signed-out page and a cleared cookie', async () => {
  const f = fixture({ provider: fakeProvider({}) });
  const session = await storeSession(f, { expiresAt: Date.UTC(2026, 10, 25, 13) });
  const handles = [undefined, 'forged.handle', f.handles.issue(session.id)];
  f.advance(2 * 3600_000);
  for (const handle of handles) {
    for (const method of ['GET', 'POST']) {
      const response = await signOutHandler(
        request({ method, ...(handle ? { handle } : {}), form: {} }),
        f.context,
      );
      assert.equal(response.status, 200);
      assert.match(response.body, /Signed out/);
      assertClearsCookie(response.setCookies);
    }
  }
});

test('a failing or hanging IdP never blocks sign-out', async () => {
  const cases = [
    fakeProvider({ revoke: () => Promise.reject(new IdpError('unavailable', 'revocation endpoint down')) }),
    fakeProvider({ revoke: () => new Promise(() => {}), endSessionUrl: () => new Promise(() => {}) }),
    fakeProvider({ endSessionUrl: () => Promise.reject(new IdpError('unavailable', 'discovery down')) }),
  ];
  for (const provider of cases) {
    const f = fixture({ provider, signoutRedirectUrl: 'https://www.example.com/bye' });
    const session = await storeSession(f);
    const started = performance.now();
    const response = await createSignOutHandler(50)(
      request({
        method: 'POST',
        handle: f.handles.issue(session.id),
        form: { portcullis_csrf: signOutToken(f.sharedSecret, session.id) },
      }),
      f.context,
    );
    assert.ok(performance.now() - started < 2_000, 'bounded');
    assert.equal(response.status, 302);
    assert.equal(new Map(response.headers).get('location'), 'https://www.example.com/bye');
    assertClearsCookie(response.setCookies);
    assert.equal(await f.sessions.get(session.id), undefined);
    assert.ok(
      f.logger.records.some((record) => record.level === 'warn'),
      'the failure is logged',
    );
  }
});

test('signed_out clears the cookie, then goes to signout_redirect_url or shows the page', async () => {
  const withRedirect = fixture({ signoutRedirectUrl: 'https://www.example.com/bye' });
  const redirected = await signedOutHandler(
    request({ url: 'https://auth.example.com:8443/.portcullis/signed_out', onAuthenticateHost: true }),
    withRedirect.context,
  );
  assert.equal(redirected.status, 302);
  assert.equal(new Map(redirected.headers).get('location'), 'https://www.example.com/bye');
  assertClearsCookie(redirected.setCookies);
  const plain = await signedOutHandler(
    request({ url: 'https://auth.example.com:8443/.portcullis/signed_out', onAuthenticateHost: true }),
    fixture().context,
  );
  assert.equal(plain.status, 200);
  assert.match(plain.body, /<h1>Signed out<\/h1>/);
  assertClearsCookie(plain.setCookies);
});

test('other methods: 405 naming the allowed ones', async () => {
  const response = await signOutHandler(request({ method: 'PUT' }), fixture().context);
  assert.equal(response.status, 405);
  assert.equal(new Map(response.headers).get('allow'), 'GET, POST');
});

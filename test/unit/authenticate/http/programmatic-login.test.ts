// Programmatic login: the redirect host must be allowed (localhost means loopback too, nothing
// more), the answer is a sign-in URL as text, and after sign-in the client's redirect URI gets the
// session handle as portcullis_jwt.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { callbackHandler } from '../../../../src/authenticate/http/callback.js';
import { handoffHandler } from '../../../../src/authenticate/http/handoff.js';
import {
  programmaticLoginHandler,
  programmaticRedirectAllowed,
} from '../../../../src/authenticate/http/programmatic-login.js';
import { signInHandler } from '../../../../src/authenticate/http/sign-in.js';
import { AUTH_URL, CALLBACK_PATH, IDP_B, harness, location, ownRequest, setCookies } from './harness.js';

const login = (redirect: string | undefined, host = 'https://other.test'): string =>
  `${host}/.portcullis/api/v1/login${redirect === undefined ? '' : `?portcullis_redirect_uri=${encodeURIComponent(redirect)}`}`;

test('allowed redirect hosts: listed names, and with localhost the loopback addresses only', () => {
  const allowed = (url: string, list = ['localhost']): boolean =>
    programmaticRedirectAllowed(new URL(url), list);
  assert.equal(allowed('http://localhost:8000/cb'), true);
  assert.equal(allowed('http://LOCALHOST/cb'), true);
  assert.equal(allowed('http://127.0.0.1:9/cb'), true);
  assert.equal(allowed('http://127.200.0.1/cb'), true);
  assert.equal(allowed('http://[::1]:8000/cb'), true);
  assert.equal(allowed('http://app.localhost/cb'), false, '*.localhost is not localhost');
  assert.equal(allowed('http://128.0.0.1/cb'), false);
  assert.equal(allowed('http://[::2]/cb'), false);
  assert.equal(allowed('http://localhost@evil.test/cb'), false);
  assert.equal(allowed('ftp://localhost/cb'), false);
  assert.equal(allowed('https://cli.example.com/cb', ['cli.example.com']), true);
  assert.equal(allowed('http://127.0.0.1/cb', ['cli.example.com']), false);
});

test('the login answers a sign-in URL as text; the browser flow ends at the redirect URI with the token', async () => {
  const h = harness();
  const answer = await programmaticLoginHandler(ownRequest(login('http://localhost:8000/cb?x=1')), h.context);
  assert.equal(answer.status, 200, answer.body);
  assert.match(answer.headers.find(([n]) => n === 'content-type')?.[1] ?? '', /^text\/plain/);
  const signInUrl = new URL(answer.body.trim());
  assert.equal(signInUrl.origin, AUTH_URL);
  assert.equal(signInUrl.pathname, '/.portcullis/sign_in');

  const started = await signInHandler(ownRequest(signInUrl.href), h.context);
  assert.equal(started.status, 302, started.body);
  const idpUrl = location(started);
  const [flow] = [...setCookies(started).values()];
  const cb = new URL(CALLBACK_PATH, AUTH_URL);
  cb.searchParams.set('state', idpUrl.searchParams.get('state') ?? '');
  cb.searchParams.set('code', 'good-code');
  const answered = await callbackHandler(
    ownRequest(cb.href, { cookies: { [flow?.name ?? '']: flow?.value ?? '' } }),
    h.context,
  );
  assert.equal(answered.status, 302, answered.body);
  assert.equal(h.providers.get(IDP_B)?.exchanges.length, 1, "the located route's IdP signed the user in");
  const handoffUrl = location(answered);
  assert.equal(handoffUrl.origin, 'https://other.test');
  const landed = await handoffHandler(ownRequest(handoffUrl.href), h.context);
  assert.equal(landed.status, 302, landed.body);
  const back = location(landed);
  assert.equal(`${back.origin}${back.pathname}`, 'http://localhost:8000/cb');
  assert.equal(back.searchParams.get('x'), '1');
  const token = back.searchParams.get('portcullis_jwt') ?? '';
  const sessionId = h.handles.verify(token);
  assert.ok(sessionId !== undefined, 'the token is a session handle');
  assert.equal((await h.sessions.get(sessionId))?.idpId, IDP_B);
});

test('a redirect host not allowed is a 400 that names it and the option', async () => {
  const h = harness();
  const refused = await programmaticLoginHandler(ownRequest(login('https://evil.test/cb')), h.context);
  assert.equal(refused.status, 400);
  assert.match(refused.body, /"evil\.test" is not allowed/);
  assert.match(refused.body, /programmatic_redirect_domain_whitelist/);
  assert.equal((await programmaticLoginHandler(ownRequest(login(undefined)), h.context)).status, 400);
  assert.equal((await programmaticLoginHandler(ownRequest(login('not a url')), h.context)).status, 400);
  assert.equal(
    (await programmaticLoginHandler(ownRequest(login('http://localhost/cb'), { method: 'POST' }), h.context))
      .status,
    405,
  );
  assert.equal(
    (
      await programmaticLoginHandler(
        ownRequest(login('http://localhost/cb', 'https://nowhere.test')),
        h.context,
      )
    ).status,
    404,
  );
});

test('a tampered or expired programmatic sign-in URL is refused', async () => {
  const h = harness();
  const answer = await programmaticLoginHandler(ownRequest(login('http://localhost:8000/cb')), h.context);
  const signInUrl = new URL(answer.body.trim());
  h.clock.now += 11 * 60_000;
  const expired = await signInHandler(ownRequest(signInUrl.href), h.context);
  assert.equal(expired.status, 400);
  assert.match(expired.body, /expired/);
  const sealed = signInUrl.searchParams.get('portcullis_programmatic') ?? '';
  signInUrl.searchParams.set('portcullis_programmatic', `${sealed.slice(0, -3)}abc`);
  assert.equal((await signInHandler(ownRequest(signInUrl.href), h.context)).status, 400);
});

test("the handoff goes to the route's served origin, whatever port (or none) the client's Host named", async () => {
  const h = harness();
  // app.test is served on the listener's 443 and on 8443, which its `from` names: users come there.
  for (const host of ['https://app.test', 'https://app.test:9999', 'http://app.test:8081']) {
    const answer = await programmaticLoginHandler(
      ownRequest(login('http://localhost:8000/cb', host)),
      h.context,
    );
    assert.equal(answer.status, 200, answer.body);
    const started = await signInHandler(ownRequest(answer.body.trim()), h.context);
    const idpUrl = location(started);
    const [flow] = [...setCookies(started).values()];
    const cb = new URL(CALLBACK_PATH, AUTH_URL);
    cb.searchParams.set('state', idpUrl.searchParams.get('state') ?? '');
    cb.searchParams.set('code', 'good-code');
    const answered = await callbackHandler(
      ownRequest(cb.href, { cookies: { [flow?.name ?? '']: flow?.value ?? '' } }),
      h.context,
    );
    assert.equal(location(answered).origin, 'https://app.test:8443', `from ${host}`);
  }
});

test('a programmatic sign-in link works once; the second use is refused, saying so', async () => {
  const h = harness();
  const answer = await programmaticLoginHandler(ownRequest(login('http://localhost:8000/cb')), h.context);
  const signInUrl = answer.body.trim();
  assert.equal((await signInHandler(ownRequest(signInUrl), h.context)).status, 302);
  const again = await signInHandler(ownRequest(signInUrl), h.context);
  assert.equal(again.status, 400, again.body);
  assert.match(again.body, /already used/);
  assert.equal(again.setCookies.length, 0);
});

/**
 * Sign-in end to end with every real part (issue 24, "Tests (real parts)"): Debian's Chromium
 * driven by playwright-core, through Portcullis all-in-one and its real Envoy on a plain-HTTP
 * loopback listener, against a real OIDC provider (oidc-provider, test/support/test-idp.ts) with a
 * login form. Host names are `*.localhost`, which Chromium sends to loopback; requests made from
 * Node go to 127.0.0.1 with the Host header instead (Node does not resolve `*.localhost`).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createRemoteJWKSet, customFetch, jwtVerify } from 'jose';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { browserCookie, launchBrowser, openPage, signInAtIdp, type Cleanup } from '../support/browser.js';
import { sendToListener as send } from '../support/listener-request.js';
import { startPortcullis, type TestPortcullis } from '../support/portcullis.js';
import { startTestIdp, type TestIdp } from '../support/test-idp.js';
import { startEchoUpstream, type EchoResponse, type EchoUpstream } from '../support/upstreams.js';
import { waitFor } from '../support/wait.js';

const CLIENT = { clientId: 'portcullis-browser-test', clientSecret: 'browser-test-secret' };
const COOKIE = '_portcullis';
/**
 * Token lifetimes (s) just over the refresher's lead time (60 s before expiry), so every session
 * is refreshed about 10 s after sign-in (its minimum interval) and every 10 s after that.
 */
const SHORT_TTL_S = 65;

/** jose's fetch for a JWKS on a `*.localhost` host: sent to Envoy's listener with that Host. */
function fetchThroughListener(port: number): (url: string, init: { method?: string }) => Promise<Response> {
  return async (url) => {
    const target = new URL(url);
    const answer = await send(port, target.host, target.pathname);
    return new Response(answer.body, {
      status: answer.status,
      headers: { 'content-type': String(answer.headers['content-type'] ?? 'application/json') },
    });
  };
}

/** The session cookie the browser holds for `origin`. */
function sessionCookie(context: BrowserContext, origin: string): Promise<string> {
  return browserCookie(context, origin, COOKIE);
}

describe('sign-in in a real browser through Envoy', () => {
  let idp: TestIdp;
  let upstream: EchoUpstream;
  let portcullis: TestPortcullis;
  let browser: Browser;
  let port: number;
  let appHost: string;
  let appOrigin: string;
  let authenticateOrigin: string;
  // Stopped last-started first when the suite ends, whether or not `before` finished.
  const cleanups: (() => unknown)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  before(async () => {
    idp = await startTestIdp({ ttl: { accessToken: SHORT_TTL_S, idToken: SHORT_TTL_S } });
    cleanups.push(() => idp.close());
    upstream = await startEchoUpstream({ id: 'app' });
    cleanups.push(() => upstream.stop());
    const config = (authenticateUrl: string): Record<string, unknown> => ({
      authenticate_service_url: authenticateUrl,
      idp_provider: 'oidc',
      idp_provider_url: idp.issuer,
      idp_client_id: CLIENT.clientId,
      idp_client_secret: CLIENT.clientSecret,
      routes: [
        {
          from: 'http://app.localhost',
          to: upstream.url,
          allowed_domains: ['example.com'],
          pass_identity_headers: true,
        },
      ],
    });
    // The listener's port is picked by the harness, and the authenticate URL carries it: start,
    // then write the config again with the real port and wait for Envoy to apply it.
    portcullis = await startPortcullis(config('http://authenticate.localhost'));
    cleanups.push(() => portcullis.stop());
    port = portcullis.proxyPort;
    appHost = `app.localhost:${port}`;
    appOrigin = `http://${appHost}`;
    authenticateOrigin = `http://authenticate.localhost:${port}`;
    idp.addClient({
      ...CLIENT,
      redirectUris: [`${authenticateOrigin}/oauth2/callback`],
      postLogoutRedirectUris: [`${authenticateOrigin}/.portcullis/signed_out`],
    });
    portcullis.writeConfig(config(authenticateOrigin));
    await waitFor(
      async () => {
        const answer = await send(port, appHost, '/', { headers: { accept: 'text/html' } });
        const location = answer.headers.location ?? '';
        if (!location.startsWith(authenticateOrigin)) throw new Error(`${answer.status} ${location}`);
        return true;
      },
      {
        what: 'the protected route to send browsers to the authenticate URL with its port',
        timeoutMs: 15_000,
      },
    );
    await portcullis.waitForEnvoyToApply('the config with the listener port');
    browser = await launchBrowser({ after: (fn) => cleanups.push(fn) });
  });

  /** Opens a fresh browser context, visits `path` on the app, signs in, lands back on it. */
  async function signIn(
    cleanup: Cleanup,
    path: string,
  ): Promise<{ context: BrowserContext; page: Page; landing: EchoResponse }> {
    const { context, page } = await openPage(browser, cleanup);
    const target = `${appOrigin}${path}`;
    await page.goto(target);
    assert.equal(
      new URL(page.url()).origin,
      idp.issuer,
      `the protected URL led to ${page.url()}, not the IdP`,
    );
    const landed = page.waitForResponse((response) => response.url() === target && response.status() === 200);
    await signInAtIdp(page, idp.user);
    const response = await landed;
    await page.waitForURL(target);
    return { context, page, landing: (await response.json()) as EchoResponse };
  }

  // First, while this is the only session: the IdP's grant counters then count its refreshes alone.
  test('a session is refreshed before its tokens expire, and ends once the IdP revokes the refresh token', async (t) => {
    const refreshesBefore = idp.counts().grants['refresh_token'] ?? 0;
    const { context } = await signIn(t, '/');
    const asBrowser = { accept: 'text/html', cookie: `${COOKIE}=${await sessionCookie(context, appOrigin)}` };
    await waitFor(async () => (idp.counts().grants['refresh_token'] ?? 0) > refreshesBefore, {
      what: 'a refresh_token grant at the IdP',
      timeoutMs: 30_000,
      intervalMs: 250,
    });
    assert.equal(
      (await send(port, appHost, '/', { headers: asBrowser })).status,
      200,
      'the refreshed session stopped working',
    );

    assert.ok(idp.revokeRefreshTokens('alice') > 0, 'the IdP had no refresh token of alice to revoke');
    const ended = await waitFor(
      async () => {
        const answer = await send(port, appHost, '/', { headers: asBrowser });
        return answer.status === 302 ? answer : undefined;
      },
      { what: 'the session to end after its refresh token was revoked', timeoutMs: 45_000, intervalMs: 500 },
    );
    assert.ok(String(ended.headers.location).startsWith(`${authenticateOrigin}/.portcullis/sign_in`));
    assert.ok((idp.counts().grantErrors['refresh_token'] ?? 0) > 0, 'the IdP refused no refresh');
  });

  test('a protected URL leads to the IdP and back to the same URL, port included, with a verifiable assertion', async (t) => {
    const { page, landing } = await signIn(t, '/some/page?q=1&r=two');
    assert.equal(page.url(), `${appOrigin}/some/page?q=1&r=two`);
    assert.equal(landing.url, '/some/page?q=1&r=two');
    const assertion = landing.headers['x-portcullis-jwt-assertion'];
    assert.equal(typeof assertion, 'string', 'the upstream received no identity assertion');
    const jwks = createRemoteJWKSet(new URL(`${appOrigin}/.well-known/portcullis/jwks.json`), {
      [customFetch]: fetchThroughListener(port),
    });
    const { payload } = await jwtVerify(String(assertion), jwks, { issuer: appHost, audience: appHost });
    assert.equal(payload['email'], 'alice@example.com');
    assert.deepEqual(payload['groups'], ['admins', 'staff']);
    assert.equal(payload['sub'], 'alice');
    // The browser never hands Portcullis's own cookie to the upstream.
    assert.ok(
      !String(landing.headers.cookie ?? '').includes(COOKIE),
      'the session cookie reached the upstream',
    );
  });

  test('the user page shows the claims and groups; /.portcullis/user answers them as JSON', async (t) => {
    const { context, page } = await signIn(t, '/');
    await page.goto(`${appOrigin}/.portcullis/`);
    const text = await page.locator('body').innerText();
    for (const expected of ['alice@example.com', 'Alice Example', 'admins', 'staff'])
      assert.ok(text.includes(expected), `the user page does not show ${expected}:\n${text}`);
    const user = await send(port, appHost, '/.portcullis/user', {
      headers: { cookie: `${COOKIE}=${await sessionCookie(context, appOrigin)}` },
    });
    assert.equal(user.status, 200, user.body);
    const info = JSON.parse(user.body) as {
      email: string;
      groups: string[];
      claims: Record<string, unknown>;
    };
    assert.equal(info.email, 'alice@example.com');
    assert.deepEqual(info.groups, ['admins', 'staff']);
    assert.equal(info.claims['name'], 'Alice Example');
  });

  test("sign-out without the session's token is refused; the page's button signs out at Portcullis and the IdP", async (t) => {
    const { context, page } = await signIn(t, '/');
    const cookie = `${COOKIE}=${await sessionCookie(context, appOrigin)}`;
    const asBrowser = { accept: 'text/html', cookie };

    const forged = await send(port, appHost, '/.portcullis/sign_out', {
      method: 'POST',
      headers: asBrowser,
      form: new URLSearchParams({ portcullis_csrf: 'not-the-token' }),
    });
    assert.equal(forged.status, 403, forged.body);
    const bare = await send(port, appHost, '/.portcullis/sign_out', {
      method: 'POST',
      headers: asBrowser,
      form: new URLSearchParams(),
    });
    assert.equal(bare.status, 403, bare.body);
    assert.equal(
      (await send(port, appHost, '/', { headers: asBrowser })).status,
      200,
      'a refused sign-out ended the session',
    );

    const endSessionBefore = idp.counts().endSession;
    await page.goto(`${appOrigin}/.portcullis/`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await waitFor(async () => idp.counts().endSession > endSessionBefore, {
      what: "the IdP's end-session endpoint to be reached",
    });
    await page.waitForURL((url) => url.origin === idp.issuer);
    const replayed = await send(port, appHost, '/', { headers: asBrowser });
    assert.equal(replayed.status, 302, `the old cookie still works after sign-out: ${replayed.status}`);
    assert.ok(
      String(replayed.headers.location).startsWith(`${authenticateOrigin}/.portcullis/sign_in`),
      `the old cookie was sent to ${replayed.headers.location}, not to sign in`,
    );
    // Confirming at the IdP returns the browser to Portcullis's signed-out page.
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.waitForURL(
      (url) => url.origin === authenticateOrigin && url.pathname === '/.portcullis/signed_out',
    );
    assert.match(await page.locator('body').innerText(), /signed out/i);
  });

  test('programmatic login hands a token to a localhost callback that works as an Authorization header', async (t) => {
    let received: URL | undefined;
    const listener = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      // Chromium also asks this origin for /favicon.ico; only the callback counts.
      if (url.pathname === '/cb') received = url;
      res.end('signed in; you can close this tab');
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise((resolve) => listener.close(resolve)));
    const callback = `http://localhost:${(listener.address() as AddressInfo).port}/cb`;

    const login = await send(
      port,
      appHost,
      `/.portcullis/api/v1/login?portcullis_redirect_uri=${encodeURIComponent(callback)}`,
    );
    assert.equal(login.status, 200, login.body);
    const signInUrl = new URL(login.body.trim());
    assert.equal(signInUrl.origin, authenticateOrigin);

    const { page } = await openPage(browser, t);
    await page.goto(signInUrl.href);
    await signInAtIdp(page, idp.user);
    await page.waitForURL((url) => url.href.startsWith(callback));
    const token = received?.searchParams.get('portcullis_jwt');
    assert.ok(token, `the callback got no portcullis_jwt: ${received?.href}`);

    const withToken = await send(port, appHost, '/api', {
      headers: { authorization: `Portcullis ${token}`, accept: 'application/json' },
    });
    assert.equal(withToken.status, 200, withToken.body);
    assert.equal((JSON.parse(withToken.body) as EchoResponse).path, '/api');
    const without = await send(port, appHost, '/api', { headers: { accept: 'application/json' } });
    assert.equal(without.status, 401, 'an API request without the token was not refused');
  });

  test('programmatic login refuses a redirect to a host outside the whitelist (400, saying why)', async () => {
    const answer = await send(
      port,
      appHost,
      `/.portcullis/api/v1/login?portcullis_redirect_uri=${encodeURIComponent('http://evil.example.com/cb')}`,
    );
    assert.equal(answer.status, 400, answer.body);
    assert.match(answer.body, /evil\.example\.com/, 'the refusal does not name the refused host');
  });
});

/**
 * Several identity providers at once, end to end with every real part: two oidc-provider
 * instances (IdP A at 127.0.0.1, IdP B at localhost, so their own cookies stay apart), Portcullis
 * all-in-one with its real Envoy, and Debian's Chromium. The global idp_* keys name A (the
 * `default` provider); `identity_providers.partner` names B, chosen by one route. Alice signs in at
 * A on A's route, is sent to B's sign-in page on B's route, signs in there, and then holds a
 * session on each host; the user page names the provider and sign-out ends the session at the
 * IdP that made it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openPage, signInAtIdp } from '../support/browser.js';
import { sendToListener as send } from '../support/listener-request.js';
import { startPortcullis, type TestPortcullis } from '../support/portcullis.js';
import { startTestIdp, type TestIdp } from '../support/test-idp.js';
import { startEchoUpstream, type EchoResponse, type EchoUpstream } from '../support/upstreams.js';
import { waitFor } from '../support/wait.js';

const CLIENT_A = { clientId: 'portcullis-staff', clientSecret: 'staff-test-secret' };
const CLIENT_B = { clientId: 'portcullis-partner', clientSecret: 'partner-test-secret' };

describe('two identity providers, each fronting its own route', () => {
  let idpA: TestIdp;
  let idpB: TestIdp;
  let upstream: EchoUpstream;
  let portcullis: TestPortcullis;
  let browser: Browser;
  let port: number;
  let originA: string;
  let originB: string;
  let authenticateOrigin: string;
  const cleanups: (() => unknown)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  before(async () => {
    idpA = await startTestIdp();
    cleanups.push(() => idpA.close());
    idpB = await startTestIdp({ hostname: 'localhost' });
    cleanups.push(() => idpB.close());
    upstream = await startEchoUpstream({ id: 'app' });
    cleanups.push(() => upstream.stop());
    const route = (host: string): Record<string, unknown> => ({
      from: `http://${host}`,
      to: upstream.url,
      allowed_domains: ['example.com'],
      pass_identity_headers: true,
    });
    const config = (authenticateUrl: string): Record<string, unknown> => ({
      authenticate_service_url: authenticateUrl,
      idp_provider: 'oidc',
      idp_provider_url: idpA.issuer,
      idp_client_id: CLIENT_A.clientId,
      idp_client_secret: CLIENT_A.clientSecret,
      identity_providers: {
        partner: {
          provider_url: idpB.issuer,
          client_id: CLIENT_B.clientId,
          client_secret: CLIENT_B.clientSecret,
        },
      },
      routes: [route('a.localhost'), { ...route('b.localhost'), identity_provider: 'partner' }],
    });
    portcullis = await startPortcullis(config('http://authenticate.localhost'));
    cleanups.push(() => portcullis.stop());
    port = portcullis.proxyPort;
    originA = `http://a.localhost:${port}`;
    originB = `http://b.localhost:${port}`;
    authenticateOrigin = `http://authenticate.localhost:${port}`;
    for (const [idp, client] of [
      [idpA, CLIENT_A],
      [idpB, CLIENT_B],
    ] as const) {
      idp.addClient({
        ...client,
        redirectUris: [`${authenticateOrigin}/oauth2/callback`],
        postLogoutRedirectUris: [`${authenticateOrigin}/.portcullis/signed_out`],
      });
    }
    portcullis.writeConfig(config(authenticateOrigin));
    await waitFor(
      async () => {
        const answer = await send(port, `b.localhost:${port}`, '/', { headers: { accept: 'text/html' } });
        const location = answer.headers.location ?? '';
        if (!location.startsWith(authenticateOrigin)) throw new Error(`${answer.status} ${location}`);
        return true;
      },
      { what: 'the routes to send browsers to the authenticate URL with its port', timeoutMs: 15_000 },
    );
    await portcullis.waitForEnvoyToApply('the config with the listener port');
    browser = await launchBrowser({ after: (fn) => cleanups.push(fn) });
  });

  /** Visits `target`, asserts it led to `idp`'s login form, signs in there and returns the upstream's view. */
  async function signInVia(page: Page, target: string, idp: TestIdp): Promise<EchoResponse> {
    await page.goto(target);
    assert.equal(new URL(page.url()).origin, idp.issuer, `${target} led to ${page.url()}, not ${idp.issuer}`);
    const landed = page.waitForResponse((response) => response.url() === target && response.status() === 200);
    await signInAtIdp(page, idp.user);
    const response = await landed;
    await page.waitForURL(target);
    return (await response.json()) as EchoResponse;
  }

  /** The upstream's view of `target` in the page, which must answer 200 without a sign-in. */
  async function reach(page: Page, target: string): Promise<EchoResponse> {
    const response = await page.goto(target);
    assert.equal(response?.status(), 200, `${target} answered ${response?.status()} at ${page.url()}`);
    assert.equal(page.url(), target);
    return (await response?.json()) as EchoResponse;
  }

  test("a session of A opens A's route only: B's route sends the browser to B; then each host holds its own", async (t) => {
    const { page } = await openPage(browser, t);
    const atA = await signInVia(page, `${originA}/a-page`, idpA);
    assert.equal(atA.path, '/a-page');
    assert.equal(typeof atA.headers['x-portcullis-jwt-assertion'], 'string', 'no assertion upstream on A');
    const grantsA = idpA.counts().grants['authorization_code'] ?? 0;

    // The session of A is no session on B's route: sign in at B, not at A (whose SSO would let it through).
    const atB = await signInVia(page, `${originB}/b-page`, idpB);
    assert.equal(atB.path, '/b-page');
    assert.equal(typeof atB.headers['x-portcullis-jwt-assertion'], 'string', 'no assertion upstream on B');
    assert.equal(idpA.counts().grants['authorization_code'] ?? 0, grantsA, "B's route signed in at A");
    assert.equal(idpB.counts().grants['authorization_code'] ?? 0, 1, 'B made no session');

    // Each host keeps the session of its own provider: A's route still opens without signing in.
    await reach(page, `${originA}/again`);
    await reach(page, `${originB}/again`);
    assert.equal(idpA.counts().authorization, 1, 'A was asked to sign in again');
    assert.equal(idpB.counts().authorization, 1, 'B was asked to sign in again');
  });

  test('the user page names the provider that signed you in, and its issuer URL', async (t) => {
    const { page } = await openPage(browser, t);
    await signInVia(page, `${originB}/`, idpB);
    await page.goto(`${originB}/.portcullis/`);
    assert.equal(await page.locator('.idp-name').innerText(), 'partner');
    assert.equal(await page.locator('.idp-url').innerText(), `${idpB.issuer}/`);
    await signInVia(page, `${originA}/`, idpA);
    await page.goto(`${originA}/.portcullis/`);
    assert.equal(await page.locator('.idp-name').innerText(), 'default');
    assert.equal(await page.locator('.idp-url').innerText(), `${idpA.issuer}/`);
  });

  test("sign-out on B's route ends the session at B's end-session endpoint, not A's", async (t) => {
    const { page } = await openPage(browser, t);
    await signInVia(page, `${originA}/`, idpA);
    await signInVia(page, `${originB}/`, idpB);
    const [endA, endB] = [idpA.counts().endSession, idpB.counts().endSession];
    await page.goto(`${originB}/.portcullis/`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await waitFor(async () => idpB.counts().endSession > endB, {
      what: "B's end-session endpoint to be reached",
    });
    await page.waitForURL((url) => url.origin === idpB.issuer);
    assert.equal(idpA.counts().endSession, endA, "sign-out on B went to A's end-session endpoint");
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.waitForURL(
      (url) => url.origin === authenticateOrigin && url.pathname === '/.portcullis/signed_out',
    );
    // B's route needs a sign-in at B again.
    await page.goto(`${originB}/`);
    assert.equal(new URL(page.url()).origin, idpB.issuer, `after sign-out B's route led to ${page.url()}`);
  });

  test('neither IdP reported an internal error', () => {
    assert.deepEqual([...idpA.serverErrors(), ...idpB.serverErrors()], []);
  });
});

/**
 * Issue 33 items 6 and 7 with every real part: Debian's Chromium (playwright-core) signs in at a
 * real OIDC provider (oidc-provider, test/support/test-idp.ts) through Portcullis all-in-one and
 * its real Envoy. The route admits `allowed_domains: [example.com]` and the user id `eve`, and
 * denies `eve@example.com`.
 * Mallory's address is at example.com but the IdP says `email_verified: false`: it counts as no
 * address, so she is refused by the allow rule. Eve (id `eve`, address `Eve@Example.com`) passes
 * the allow rule by her id, and the deny catches her address in any case.
 * Alice (verified, not denied) gets through, so the refusals are the policy's and not the set-up's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser, openPage, signInAtIdp, type Cleanup } from '../support/browser.js';
import { sendToListener as send } from '../support/listener-request.js';
import { startPortcullis, type TestPortcullis } from '../support/portcullis.js';
import { startTestIdp, type TestIdp } from '../support/test-idp.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstreams.js';
import { waitFor } from '../support/wait.js';

const CLIENT = { clientId: 'portcullis-email-test', clientSecret: 'email-test-secret' };
const MALLORY = {
  username: 'mallory',
  password: 'mallory-password',
  email: 'mallory@example.com',
  claims: { email_verified: false },
};
const EVE = { username: 'eve', password: 'eve-password', email: 'Eve@Example.com' };

describe('e-mail policies in a real browser through Envoy', () => {
  let idp: TestIdp;
  let upstream: EchoUpstream;
  let portcullis: TestPortcullis;
  let browser: Browser;
  let appOrigin: string;
  const cleanups: (() => unknown)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  before(async () => {
    idp = await startTestIdp({ accounts: [MALLORY, EVE] });
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
          allowed_users: ['eve'],
          policy: [{ deny: { or: [{ email: 'eve@example.com' }] } }],
        },
      ],
    });
    portcullis = await startPortcullis(config('http://authenticate.localhost'));
    cleanups.push(() => portcullis.stop());
    const port = portcullis.proxyPort;
    const appHost = `app.localhost:${port}`;
    appOrigin = `http://${appHost}`;
    const authenticateOrigin = `http://authenticate.localhost:${port}`;
    idp.addClient({ ...CLIENT, redirectUris: [`${authenticateOrigin}/oauth2/callback`] });
    portcullis.writeConfig(config(authenticateOrigin));
    await waitFor(
      async () => {
        const answer = await send(port, appHost, '/', { headers: { accept: 'text/html' } });
        const location = answer.headers.location ?? '';
        if (!location.startsWith(authenticateOrigin)) throw new Error(`${answer.status} ${location}`);
        return true;
      },
      { what: 'the route to send browsers to the authenticate URL with its port', timeoutMs: 15_000 },
    );
    await portcullis.waitForEnvoyToApply('the config with the listener port');
    browser = await launchBrowser({ after: (fn) => cleanups.push(fn) });
  });

  /** Signs `user` in from a fresh browser at the app and returns the status the app then answers. */
  async function statusAfterSignIn(
    cleanup: Cleanup,
    user: { username: string; password: string },
  ): Promise<{ status: number; body: string }> {
    const { page } = await openPage(browser, cleanup);
    const target = `${appOrigin}/page`;
    await page.goto(target);
    assert.equal(new URL(page.url()).origin, idp.issuer, `the app led to ${page.url()}, not the IdP`);
    const landed = page.waitForResponse((response) => response.url() === target);
    await signInAtIdp(page, user);
    const response = await landed;
    return { status: response.status(), body: await response.text() };
  }

  test('a verified address in the allowed domain gets through (the control)', async (t) => {
    const { status } = await statusAfterSignIn(t, idp.user);
    assert.equal(status, 200);
  });

  test('an address the IdP marks email_verified: false does not satisfy allowed_domains', async (t) => {
    const { status, body } = await statusAfterSignIn(t, MALLORY);
    assert.equal(status, 403, body);
    assert.match(body, /not allowed to access/);
  });

  test('Eve@Example.com is denied by a deny on eve@example.com', async (t) => {
    const { status, body } = await statusAfterSignIn(t, EVE);
    assert.equal(status, 403, body);
    assert.match(body, /denied by policy/);
  });
});

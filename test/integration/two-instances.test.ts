/**
 * Two Portcullis instances, each with its own Envoy, sharing sessions through one real Redis
 * (issue 25, "Tests (real parts)"): Envoy A listens on 127.0.0.1:P and Envoy B on 127.0.0.2:P, so
 * both serve the same URLs, as two replicas behind a load balancer. Debian's Chromium signs in
 * through A (browsers send `*.localhost` to 127.0.0.1); requests from Node reach B with the same
 * Host header and cookie. A sign-out through A is refused by B within one second, through Redis's
 * change feed dropping B's cached copy of the session.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { browserCookie, launchBrowser, openPage, signInAtIdp, type Cleanup } from '../support/browser.js';
import { sendToListener } from '../support/listener-request.js';
import { freePort } from '../support/ports.js';
import { startPortcullis, type TestPortcullis } from '../support/portcullis.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';
import { startTestIdp, type TestIdp } from '../support/test-idp.js';
import { startEchoUpstream, type EchoResponse, type EchoUpstream } from '../support/upstreams.js';
import { waitFor } from '../support/wait.js';
import { checksSoFar } from '../support/envoy-checks.js';
import { decisionCookieName } from '../../src/contract/fast-path.js';

const CLIENT = { clientId: 'portcullis-two-instances', clientSecret: 'two-instances-secret' };
const COOKIE = '_portcullis';
const DT_COOKIE = decisionCookieName(COOKIE);

/** GET `path` from the Envoy listening on `address`:`port` with `host` as the Host header. */
function get(address: string, port: number, host: string, path: string, headers: Record<string, string>) {
  return sendToListener(port, host, path, { address, headers });
}

describe('two instances on one Redis', () => {
  let redis: TestRedisServer;
  let idp: TestIdp;
  let upstream: EchoUpstream;
  let first: TestPortcullis;
  let second: TestPortcullis;
  let browser: Browser;
  let port: number;
  let appHost: string;
  let appOrigin: string;
  const cleanups: (() => unknown)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  before(async () => {
    redis = await startRedisServer();
    cleanups.push(() => redis.close());
    idp = await startTestIdp();
    cleanups.push(() => idp.close());
    upstream = await startEchoUpstream({ id: 'app' });
    cleanups.push(() => upstream.stop());
    port = await freePort();
    appHost = `app.localhost:${port}`;
    appOrigin = `http://${appHost}`;
    const authenticateOrigin = `http://authenticate.localhost:${port}`;
    idp.addClient({
      ...CLIENT,
      redirectUris: [`${authenticateOrigin}/oauth2/callback`],
      postLogoutRedirectUris: [`${authenticateOrigin}/.portcullis/signed_out`],
    });
    // One config for both: the same secrets, IdP client and Redis, as replicas share.
    const config = {
      shared_secret: randomBytes(32).toString('base64'),
      cookie_secret: randomBytes(32).toString('base64'),
      databroker_storage_type: 'redis',
      databroker_storage_connection_string: redis.url,
      authenticate_service_url: authenticateOrigin,
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
    };
    first = await startPortcullis(config, { listen: { host: '127.0.0.1', port } });
    cleanups.push(() => first.stop());
    second = await startPortcullis(config, { listen: { host: '127.0.0.2', port } });
    cleanups.push(() => second.stop());
    browser = await launchBrowser({ after: (fn) => cleanups.push(fn) });
  });

  /** Signs in through the first instance (Chromium sends app.localhost to 127.0.0.1). */
  async function signIn(cleanup: Cleanup): Promise<{ context: BrowserContext; page: Page }> {
    const { context, page } = await openPage(browser, cleanup);
    const target = `${appOrigin}/hello`;
    await page.goto(target);
    assert.equal(
      new URL(page.url()).origin,
      idp.issuer,
      `the protected URL led to ${page.url()}, not the IdP`,
    );
    const landed = page.waitForResponse((response) => response.url() === target && response.status() === 200);
    await signInAtIdp(page, idp.user);
    const body = (await (await landed).json()) as EchoResponse;
    assert.equal(body.url, '/hello');
    return { context, page };
  }

  test('a session made through one instance works through the other; a sign-out through one is refused by the other within a second', async (t) => {
    const { context, page } = await signIn(t);
    const cookie = `${COOKIE}=${await browserCookie(context, appOrigin, COOKIE)}`;
    const asBrowser = { accept: 'text/html', cookie };

    // Through the second instance: the same cookie, read from Redis (it never saw this session).
    const through = await get('127.0.0.2', port, appHost, '/other', asBrowser);
    assert.equal(
      through.status,
      200,
      `the second instance refused the session: ${through.status} ${through.body}`,
    );
    const echoed = JSON.parse(through.body) as EchoResponse;
    assert.equal(
      typeof echoed.headers['x-portcullis-jwt-assertion'],
      'string',
      'no assertion from the second instance',
    );
    // Cached there now: the sign-out must reach that cache, not only Redis.
    assert.equal((await get('127.0.0.2', port, appHost, '/again', asBrowser)).status, 200);

    await page.goto(`${appOrigin}/.portcullis/`);
    // Timed from the click: the sign-out request, Redis's feed and the poll all count.
    const signedOutAt = Date.now();
    await page.getByRole('button', { name: 'Sign out' }).click();
    const refused = await waitFor(
      async () => {
        const answer = await get('127.0.0.2', port, appHost, '/after', asBrowser);
        return answer.status === 302 ? answer : undefined;
      },
      { what: 'the second instance to refuse the signed-out cookie', timeoutMs: 5_000, intervalMs: 20 },
    );
    const tookMs = Date.now() - signedOutAt;
    t.diagnostic(`the second instance refused the signed-out cookie ${tookMs} ms after the click`);
    assert.ok(tookMs < 1_000, `the second instance accepted the signed-out cookie for ${tookMs} ms`);
    assert.ok(
      String(refused.headers.location).includes('/.portcullis/sign_in'),
      String(refused.headers.location),
    );
    assert.equal((await get('127.0.0.1', port, appHost, '/after', asBrowser)).status, 302);
    await page.waitForURL((url) => url.origin === idp.issuer);
  });

  test('the fast path: both Envoys decide repeat requests from the decision cookie, and a sign-out through one stops it at both at once', async (t) => {
    const { context, page } = await signIn(t);
    const session = await browserCookie(context, appOrigin, COOKIE);
    // None is minted within DECISION_REVOCATION_MARGIN_MS of the session's creation: browse on.
    const decision = await waitFor(
      async () => {
        await page.goto(`${appOrigin}/browse`);
        return (await context.cookies(appOrigin)).find((cookie) => cookie.name === DT_COOKIE)?.value;
      },
      { what: 'the browser to get a decision cookie', timeoutMs: 5_000, intervalMs: 100 },
    );
    const asBrowser = { accept: 'text/html', cookie: `${COOKIE}=${session}; ${DT_COOKIE}=${decision}` };
    // A token minted by the first instance is honoured by the second's Envoy: the same derived key.
    for (const [address, instance] of [
      ['127.0.0.1', first],
      ['127.0.0.2', second],
    ] as const) {
      const before = await checksSoFar(instance.adminUrl);
      for (let i = 0; i < 5; i += 1) {
        const answer = await get(address, port, appHost, `/fast/${i}`, asBrowser);
        assert.equal(answer.status, 200, `${address}: ${answer.status} ${answer.body}`);
      }
      assert.equal((await checksSoFar(instance.adminUrl)) - before, 0, `${address} asked Portcullis`);
    }

    await page.goto(`${appOrigin}/.portcullis/`);
    const signedOutAt = Date.now();
    await page.getByRole('button', { name: 'Sign out' }).click();
    const refusedAt = await Promise.all(
      ['127.0.0.1', '127.0.0.2'].map(async (address) => {
        await waitFor(async () => (await get(address, port, appHost, '/after', asBrowser)).status === 302, {
          what: `${address} to refuse the signed-out cookies`,
          timeoutMs: 5_000,
          intervalMs: 5,
        });
        return Date.now() - signedOutAt;
      }),
    );
    t.diagnostic(
      `after the sign-out click, refused by the first Envoy in ${refusedAt[0]} ms and the second in ${refusedAt[1]} ms`,
    );
    for (const took of refusedAt)
      assert.ok(took < 1_000, `an Envoy honoured the signed-out decision cookie for ${took} ms`);
    await page.waitForURL((url) => url.origin === idp.issuer);
  });
});

/**
 * The fast path end to end (issue 35), every part real: Portcullis all-in-one with its Envoy, a
 * real sign-in at the test IdP (oidc-provider), a cookie-keeping client. After the first allow,
 * Envoy decides repeat requests by itself from the decision cookie (counted: Envoy's ext_authz
 * stats show no Check), forwarding what a slow-path allow would; each way a token can be wrong
 * asks Portcullis instead, and Portcullis decides correctly; a sign-out, a refused refresh, a
 * refresh and a policy edit each stop the old cookie at once. Two instances on one Redis, with
 * Chromium, are in two-instances.test.ts; the fast path off (`0s`) in fast-path-off.test.ts.
 */
import assert from 'node:assert/strict';
import { generateKeyPair, SignJWT, decodeJwt } from 'jose';
import { after, before, describe, test } from 'node:test';
import { adminRequest } from '../../src/envoy/admin.js';
import { checksSoFar } from '../support/envoy-checks.js';
import {
  decisionCookieName,
  DECISION_TOKEN_ISSUER,
  DECISION_TOKEN_TYPE,
} from '../../src/contract/fast-path.js';
import {
  startSignInRig,
  SESSION_COOKIE,
  type EnvoyClient,
  type SignInRig,
} from '../support/sign-in-envoy.js';
import type { EchoResponse } from '../support/upstreams.js';
import { waitFor } from '../support/wait.js';

const DT_COOKIE = decisionCookieName(SESSION_COOKIE);
const CLAIM_HEADER = 'x-portcullis-claim-email';

describe('the fast path through a real Envoy, after a real sign-in', () => {
  let rig: SignInRig;
  before(async () => {
    rig = await startSignInRig({
      extraConfig: { jwt_claims_headers: ['email'] },
      appRoute: { allowed_domains: ['example.com'], pass_identity_headers: true },
      extraRoutes: (to) => [
        { from: 'http://app.localhost', prefix: '/denied', to, allowed_users: ['nobody@example.com'] },
        {
          from: 'http://app.localhost',
          prefix: '/method',
          to,
          pass_identity_headers: true,
          policy: [{ allow: { and: [{ domain: { is: 'example.com' } }, { http_method: { is: 'GET' } }] } }],
        },
      ],
    });
  });
  after(async () => {
    await rig.stop();
  });

  const checks = (): Promise<number> => checksSoFar(rig.portcullis.adminUrl);
  /** GETs `path` on the app and says how many Checks it took. */
  async function get(client: EnvoyClient, path: string, headers: Record<string, string> = {}) {
    const before = await checks();
    const answer = await client.get(`${rig.appOrigin}${path}`, headers);
    return { answer, checks: (await checks()) - before };
  }
  const cookieOf = (client: EnvoyClient, name: string): string | undefined =>
    client.jar.get(`app.localhost:${rig.port}`, name);
  /**
   * Signs alice in, then requests the app until Portcullis hands out a decision cookie: it mints
   * none within DECISION_REVOCATION_MARGIN_MS of a change of the session, its creation included.
   */
  async function signIn(client: EnvoyClient): Promise<{ sessionId: string }> {
    const signedIn = await rig.signIn(client, '/');
    await waitFor(
      async () => {
        await client.get(`${rig.appOrigin}/`);
        return cookieOf(client, DT_COOKIE);
      },
      { what: 'a decision cookie', timeoutMs: 5_000, intervalMs: 100 },
    );
    return signedIn;
  }

  test('repeat requests are decided by Envoy: no Check, and the upstream gets what a slow-path allow sends', async () => {
    const client = rig.client();
    await signIn(client);
    const token = cookieOf(client, DT_COOKIE);
    assert.ok(token !== undefined, 'the allow set no decision cookie');
    // What the slow path sends, for comparison: the same request without the decision cookie.
    const slow = await get(rig.client(), '/slow', {
      cookie: `${SESSION_COOKIE}=${cookieOf(client, SESSION_COOKIE) ?? ''}`,
    });
    assert.equal(slow.answer.status, 200);
    assert.equal(slow.checks, 1);
    const slowSeen = JSON.parse(slow.answer.body) as EchoResponse;

    for (let i = 0; i < 20; i += 1) {
      const { answer, checks: asked } = await get(client, `/fast/${i}`);
      assert.equal(answer.status, 200, answer.body);
      assert.equal(asked, 0, `request ${i} asked Portcullis`);
      const seen = JSON.parse(answer.body) as EchoResponse;
      const assertion = String(seen.headers['x-portcullis-jwt-assertion']);
      const claims = decodeJwt(assertion);
      assert.equal(claims.aud, `app.localhost:${rig.port}`);
      assert.equal(claims.email, 'alice@example.com');
      assert.ok((claims.exp ?? 0) * 1000 > Date.now(), 'the forwarded assertion has expired');
      assert.equal(seen.headers[CLAIM_HEADER], slowSeen.headers[CLAIM_HEADER]);
      assert.equal(seen.headers[CLAIM_HEADER], 'alice@example.com');
      const upstreamCookies = String(seen.headers.cookie ?? '');
      assert.ok(
        !upstreamCookies.includes(DT_COOKIE),
        `the decision cookie reached the upstream: ${upstreamCookies}`,
      );
      assert.ok(!upstreamCookies.includes(`${SESSION_COOKIE}=`), 'the session cookie reached the upstream');
      assert.equal(seen.headers['x-portcullis-sid'], undefined, 'the sid header reached the upstream');
    }
  });

  test('a route whose policy names http_method always asks Portcullis', async () => {
    const client = rig.client();
    await signIn(client);
    for (let i = 0; i < 3; i += 1) {
      const { answer, checks: asked } = await get(client, '/method');
      assert.equal(answer.status, 200);
      assert.equal(asked, 1, 'a request-dependent route was replayed');
    }
  });

  test('every wrong token asks Portcullis, which decides correctly', async () => {
    const client = rig.client();
    await signIn(client);
    const session = `${SESSION_COOKIE}=${cookieOf(client, SESSION_COOKIE) ?? ''}`;
    const token = cookieOf(client, DT_COOKIE) ?? '';
    const payload = decodeJwt(token);
    const otherKey = await generateKeyPair('ES256');
    const forged = await new SignJWT({ ...payload })
      .setProtectedHeader({ alg: 'ES256', typ: DECISION_TOKEN_TYPE })
      .sign(otherKey.privateKey);
    const [header, body, signature] = token.split('.');
    const tampered = `${header}.${body}.${signature?.startsWith('A') ? 'B' : 'A'}${signature?.slice(1)}`;
    const expiredBody = Buffer.from(
      JSON.stringify({ ...payload, exp: Math.floor(Date.now() / 1000) - 60 }),
    ).toString('base64url');
    const cases: readonly (readonly [string, string, string, number])[] = [
      ['signed by another key', forged, '/', 200],
      ['tampered signature', tampered, '/', 200],
      ['payload swapped (expired)', `${header}.${expiredBody}.${signature}`, '/', 200],
      ['malformed', 'not-a-jwt', '/', 200],
      ['for a route this user is denied', token, '/denied', 403],
    ];
    for (const [what, dt, path, status] of cases) {
      const { answer, checks: asked } = await get(rig.client(), path, {
        cookie: `${session}; ${DT_COOKIE}=${dt}`,
      });
      assert.equal(asked, 1, `${what}: Envoy did not ask Portcullis`);
      assert.equal(answer.status, status, `${what}: ${answer.body}`);
    }
    // Without the session cookie, a wrong token is no session at all: sign in.
    const { answer, checks: asked } = await get(rig.client(), '/', { cookie: `${DT_COOKIE}=${forged}` });
    assert.equal(asked, 1);
    assert.equal(answer.status, 302);
    assert.equal(payload.iss, DECISION_TOKEN_ISSUER);
  });

  test('what an upstream received authorizes nothing: the assertion as a cookie, a bearer or a header', async () => {
    const client = rig.client();
    await signIn(client);
    const seen = JSON.parse((await get(client, '/')).answer.body) as EchoResponse;
    const assertion = String(seen.headers['x-portcullis-jwt-assertion']);
    for (const headers of [
      { cookie: `${DT_COOKIE}=${assertion}` },
      { authorization: `Portcullis ${assertion}` },
      { 'x-portcullis-jwt-assertion': assertion },
      { 'x-portcullis-sid': String(decodeJwt(cookieOf(client, DT_COOKIE) ?? '').sid) },
    ]) {
      const { answer, checks: asked } = await get(rig.client(), '/', headers);
      assert.equal(asked, 1, `${Object.keys(headers)[0]}: Envoy did not ask Portcullis`);
      assert.ok(
        answer.status === 302 || answer.status === 401,
        `${JSON.stringify(headers).slice(0, 40)}: ${answer.status}`,
      );
    }
  });

  test('an API client with Authorization: Portcullis keeps the slow path and gets no decision cookie', async () => {
    const client = rig.client();
    await signIn(client);
    const handle = cookieOf(client, SESSION_COOKIE) ?? '';
    const bearer = rig.client();
    for (let i = 0; i < 2; i += 1) {
      const { answer, checks: asked } = await get(bearer, '/', { authorization: `Portcullis ${handle}` });
      assert.equal(answer.status, 200);
      assert.equal(asked, 1);
      assert.ok(
        !answer.setCookies.some((cookie) => cookie.startsWith(`${DT_COOKIE}=`)),
        'a bearer client got a decision cookie',
      );
    }
  });

  test('sign-out (the session deleted), a refused refresh and a refresh each stop the old cookie at once', async () => {
    const stopAfter = async (
      end: (sessionId: string) => Promise<unknown>,
      expected: number,
    ): Promise<void> => {
      const client = rig.client();
      const { sessionId } = await signIn(client);
      assert.equal((await get(client, '/')).checks, 0, 'the fast path was not in use before');
      const kept = `${DT_COOKIE}=${cookieOf(client, DT_COOKIE) ?? ''}; ${SESSION_COOKIE}=${cookieOf(client, SESSION_COOKIE) ?? ''}`;
      await end(sessionId);
      const startedAt = Date.now();
      // Envoy must stop honouring the old token: the next request asks Portcullis.
      let asked = 0;
      let status = 0;
      for (let i = 0; i < 100 && asked === 0; i += 1) {
        const result = await get(rig.client(), '/', { cookie: kept });
        asked = result.checks;
        status = result.answer.status;
      }
      assert.equal(asked, 1, 'Envoy still honoured the revoked token');
      assert.equal(status, expected);
      assert.ok(Date.now() - startedAt < 2_000);
    };
    await stopAfter((id) => rig.portcullis.running.sessions.delete(id), 302);
    await stopAfter(async (id) => {
      assert.ok(rig.idp.revokeRefreshTokens('alice') > 0);
      assert.equal(await rig.portcullis.running.authenticate.refreshNow(id), 'ended');
    }, 302);
    // A refresh that keeps the session (its claims may have changed): the old token is refused, the
    // session still allows through Portcullis.
    await stopAfter(async (id) => {
      assert.equal(await rig.portcullis.running.authenticate.refreshNow(id), 'refreshed');
    }, 200);
  });

  test('a policy edit takes effect on the next request', async () => {
    const client = rig.client();
    await signIn(client);
    assert.equal((await get(client, '/')).checks, 0);
    const routes = (rig.config.routes as Record<string, unknown>[]).map((route) =>
      route.allowed_domains === undefined ? route : { ...route, allowed_domains: ['example.org'] },
    );
    rig.portcullis.writeConfig({ ...rig.config, routes });
    await rig.portcullis.waitForEnvoyToApply('the edited policy');
    const { answer, checks: asked } = await get(client, '/');
    assert.equal(asked, 1, 'the old decision was replayed after its policy changed');
    assert.equal(answer.status, 403);
    rig.portcullis.writeConfig(rig.config);
    await rig.portcullis.waitForEnvoyToApply('the policy restored');
  });
});

describe('the fast path off (decision_token_lifetime: 0s)', () => {
  let rig: SignInRig;
  before(async () => {
    rig = await startSignInRig({ extraConfig: { decision_token_lifetime: '0s' } });
  });
  after(async () => {
    await rig.stop();
  });

  test('no decision cookie, every request asks Portcullis, and Envoy runs no fast-path filter', async () => {
    const client = rig.client();
    await rig.signIn(client, '/');
    assert.equal(client.jar.get(`app.localhost:${rig.port}`, DT_COOKIE), undefined);
    for (let i = 0; i < 3; i += 1) {
      const before = await checksSoFar(rig.portcullis.adminUrl);
      const answer = await client.get(`${rig.appOrigin}/`);
      assert.equal(answer.status, 200);
      assert.equal((await checksSoFar(rig.portcullis.adminUrl)) - before, 1);
      assert.ok(!answer.setCookies.some((cookie) => cookie.startsWith(`${DT_COOKIE}=`)));
    }
    const listeners = (
      await adminRequest(rig.portcullis.adminUrl, '/config_dump?resource=dynamic_listeners', {
        timeoutMs: 5_000,
      })
    ).body;
    assert.ok(listeners.includes('ext_authz'), 'the listener dump shows no HTTP filters at all');
    assert.ok(!listeners.includes('jwt_authn'), 'the listener has a jwt_authn filter with the fast path off');
    assert.ok(
      !listeners.includes('portcullis.fast_path'),
      'the listener has the fast-path RBAC with the fast path off',
    );
  });
});

/**
 * The IdP's tokens for upstreams, with every real part: Portcullis all-in-one and its real Envoy,
 * a real sign-in at the test IdP (oidc-provider) and an echo upstream. A route whose
 * set_request_headers name `${portcullis.access_token}`, `${portcullis.id_token}` and a claim gets
 * them per request: the access token is one the IdP accepts at its userinfo endpoint, the ID token
 * verifies against the IdP's JWKS, a client-sent Authorization is replaced, an API client signed
 * in with `Authorization: Portcullis` gets the same, and after a refresh the new access token is
 * sent. No token reaches the client or Portcullis's logs (Envoy at debug included). And
 * `portcullis validate` refuses an unknown template, naming the header's key.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { startSignInRig, type SignInRig, SESSION_COOKIE } from '../support/sign-in-envoy.js';
import type { EchoResponse } from '../support/upstreams.js';
import { signInLines } from '../support/sign-in-config.js';

const APP_ROUTE = {
  allowed_domains: ['example.com'],
  set_request_headers: {
    Authorization: 'Bearer ${portcullis.access_token}',
    'X-Id-Token': '${portcullis.id_token}',
    'X-User-Email': 'mail=${portcullis.claims.email}',
    'X-Literal': 'cost $${price}',
  },
};

describe('IdP tokens in request headers (real IdP, Envoy and upstream)', () => {
  let rig: SignInRig;
  before(async () => {
    rig = await startSignInRig({
      appRoute: APP_ROUTE,
      idp: { rotateRefreshTokens: true },
      extraConfig: { log_level: 'debug', proxy_log_level: 'debug' },
    });
  });
  after(async () => {
    await rig?.stop();
  });

  const echoed = (body: string): EchoResponse => JSON.parse(body) as EchoResponse;
  const header = (echo: EchoResponse, name: string): string | undefined => {
    const value = echo.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  /** What the IdP's userinfo endpoint says about `accessToken` (its status and `sub`). */
  const userinfo = async (accessToken: string): Promise<{ status: number; sub: unknown }> => {
    const answer = await fetch(`${rig.idp.issuer}/me`, {
      headers: { authorization: `Bearer ${accessToken}` },
      signal: AbortSignal.timeout(10_000),
    });
    const body = answer.ok ? ((await answer.json()) as Record<string, unknown>) : {};
    return { status: answer.status, sub: body.sub };
  };
  const bearerOf = (echo: EchoResponse): string => {
    const value = header(echo, 'authorization') ?? '';
    assert.match(value, /^Bearer \S+$/, `the upstream got Authorization: ${value}`);
    return value.slice('Bearer '.length);
  };

  test('the upstream gets the access token the IdP issued, its ID token and the claim; the client sees none', async () => {
    const client = rig.client();
    await rig.signIn(client, '/');
    const answer = await client.get(`${rig.appOrigin}/api`, { authorization: 'Bearer forged-by-client' });
    assert.equal(answer.status, 200, answer.body);
    const echo = echoed(answer.body);
    const accessToken = bearerOf(echo);
    assert.notEqual(accessToken, 'forged-by-client', 'the client-sent Authorization reached the upstream');
    assert.deepEqual(await userinfo(accessToken), { status: 200, sub: 'alice' });

    const idToken = header(echo, 'x-id-token') ?? '';
    const { payload } = await jwtVerify(idToken, createRemoteJWKSet(new URL(`${rig.idp.issuer}/jwks`)), {
      issuer: rig.idp.issuer,
    });
    assert.equal(payload.sub, 'alice');
    assert.equal(header(echo, 'x-user-email'), 'mail=alice@example.com');
    assert.equal(header(echo, 'x-literal'), 'cost ${price}');

    // Nothing the client receives carries a token (no decision cookie on this route either).
    const seen = JSON.stringify({ headers: answer.headers, cookies: answer.setCookies });
    assert.ok(!seen.includes(accessToken) && !seen.includes(idToken), 'a token reached the client');
    assert.ok(!answer.setCookies.some((cookie) => cookie.includes('decision')), answer.setCookies.join('; '));
    const logged = JSON.stringify(rig.portcullis.logs);
    assert.ok(!logged.includes(accessToken), 'the access token was logged');
    const where = rig.portcullis.logs
      .filter((r) => JSON.stringify(r).includes(idToken))
      .map((r) => JSON.stringify(r).replace(idToken, '<ID>').slice(0, 600));
    assert.ok(!logged.includes(idToken), `the ID token was logged: ${where.join('\n')}`);
  });

  test('an API client with Authorization: Portcullis gets the same headers, its credential replaced', async () => {
    const browser = rig.client();
    await rig.signIn(browser, '/');
    const handle = browser.jar.get(`app.localhost:${rig.port}`, SESSION_COOKIE);
    assert.ok(handle !== undefined);
    const answer = await rig.client().get(`${rig.appOrigin}/api`, {
      authorization: `Portcullis ${handle}`,
      accept: 'application/json',
    });
    assert.equal(answer.status, 200, answer.body);
    const accessToken = bearerOf(echoed(answer.body));
    assert.deepEqual(await userinfo(accessToken), { status: 200, sub: 'alice' });
  });

  test('after a refresh the new access token is sent', async () => {
    const client = rig.client();
    const { sessionId } = await rig.signIn(client, '/');
    const before = bearerOf(echoed((await client.get(`${rig.appOrigin}/`)).body));
    assert.equal(await rig.portcullis.running.authenticate.refreshNow(sessionId), 'refreshed');
    const answer = await client.get(`${rig.appOrigin}/`);
    assert.equal(answer.status, 200, answer.body);
    const after = bearerOf(echoed(answer.body));
    assert.notEqual(after, before, 'the upstream still gets the token from before the refresh');
    assert.deepEqual(await userinfo(after), { status: 200, sub: 'alice' });
  });

  test('a session whose tokens cannot be used is refused with 401, not sent upstream empty', async () => {
    const client = rig.client();
    const { sessionId } = await rig.signIn(client, '/');
    const stored = await rig.portcullis.running.sessions.get(sessionId);
    assert.ok(stored?.tokens !== undefined);
    // The access token's expiry passed and no refresh happened (as when the IdP stays down).
    await rig.portcullis.running.sessions.put({
      ...stored,
      tokens: { ...stored.tokens, accessTokenExpiresAt: Date.now() - 1_000 },
    });
    const requests = rig.upstream.requests;
    const answer = await client.get(`${rig.appOrigin}/`);
    assert.equal(answer.status, 401, answer.body);
    assert.match(answer.body, /Sign out and sign in again/);
    assert.equal(rig.upstream.requests, requests, 'the upstream was reached');
  });
});

test('portcullis validate refuses an unknown template, naming the header key', () => {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-templates-'));
  try {
    const file = join(dir, 'config.yaml');
    writeFileSync(
      file,
      `${signInLines('yaml')}insecure_server: true\naddress: ":8080"\nroutes:\n  - from: https://app.example.com\n    to: http://10.0.0.1:8080\n    allow_any_authenticated_user: true\n    set_request_headers:\n      Authorization: "Bearer \${portcullis.acces_token}"\n`,
    );
    const result = spawnSync(
      process.execPath,
      [new URL('../../bin/portcullis.mjs', import.meta.url).pathname, 'validate', '--config', file],
      { encoding: 'utf8', timeout: 60_000 },
    );
    assert.equal(result.status, 1, result.stdout + result.stderr);
    const output = result.stdout + result.stderr;
    assert.match(output, /routes\[0\]\.set_request_headers\.Authorization/);
    assert.match(output, /\$\{portcullis\.acces_token\}/);
    assert.match(output, /\$\{portcullis\.access_token\}/, 'the supported names are listed');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

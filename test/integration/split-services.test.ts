// Split mode end to end (issue 25): databroker (memory), authorize, authenticate and proxy (its own
// Envoy) as four processes of the real command, with tls_derive. A browserless sign-in through
// Envoy reaches the upstream with an assertion that verifies against the route host's JWKS, and
// sign-out ends the session. The proxy follows the databroker's change feed (the fast path's
// revocations). The databroker refuses internal calls without a valid token (none,
// expired, a user assertion) and answers a valid one; derived TLS refuses another secret's CA and
// plaintext; authorize's gRPC health answers SERVING. Killing the databroker makes a signed-in
// request answer 503 (never 302 or 200) while public routes keep working.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { service as HEALTH_SERVICE } from 'grpc-health-check';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { HANDOFF_PATH, SIGN_IN_PATH, SIGN_OUT_PATH, CSRF_PARAM } from '../../src/contract/endpoints.js';
import { mintInternalToken } from '../../src/contract/internal-token.js';
import { deriveInternalTls, type DerivedTls } from '../../src/pki/derived-tls.js';
import { internalChannelCredentials } from '../../src/grpc/internal-grpc.js';
import { createDatabrokerCodec, methodPath } from '../../src/databroker/grpc/messages.js';
import { signOutToken } from '../../src/authenticate/pages/sign-out-token.js';
import { SessionHandles } from '../../src/session/handle.js';
import { adminRequest } from '../../src/envoy/admin.js';
import { AUTHORIZE_CLUSTER, OWN_HTTP_CLUSTER } from '../../src/contract/names.js';
import { RECORD_TYPES } from '../../src/session/records.js';
import { decisionCookieName } from '../../src/contract/fast-path.js';
import { completeLogin } from '../support/idp-login.js';
import { EnvoyClient, SESSION_COOKIE } from '../support/sign-in-envoy.js';
import { SPLIT_TLS_NAME, startSplitDeployment, type SplitDeployment } from '../support/split-processes.js';
import type { EchoResponse } from '../support/upstreams.js';
import { waitFor } from '../support/wait.js';

let split: SplitDeployment;
let tls: DerivedTls;

before(async () => {
  split = await startSplitDeployment();
  tls = await deriveInternalTls(split.sharedSecret, SPLIT_TLS_NAME);
});

after(async () => {
  await split?.stop();
});

/** Runs `check`; a failure's message gets every process's output appended (what each service logged). */
async function explained(check: () => Promise<void>): Promise<void> {
  try {
    await check();
  } catch (err) {
    if (err instanceof Error) err.message += `\n${split.outputs()}`;
    throw err;
  }
}

/** Signs alice in through Envoy from `path` on the app host; gives the app host's session id. */
async function signIn(client: EnvoyClient, path: string): Promise<string> {
  const { appOrigin, authenticateOrigin, proxyPort } = split;
  const app = await client.get(`${appOrigin}${path}`);
  assert.equal(app.status, 302, `the app did not send to sign-in: ${app.status} ${app.body}`);
  const signInUrl = new URL(app.headers.location ?? '');
  assert.equal(`${signInUrl.origin}${signInUrl.pathname}`, `${authenticateOrigin}${SIGN_IN_PATH}`);
  const toIdp = await client.get(signInUrl);
  assert.equal(toIdp.status, 302, `sign-in did not lead to the IdP: ${toIdp.status} ${toIdp.body}`);
  const callback = await completeLogin(
    toIdp.headers.location ?? '',
    split.idp.user.username,
    split.idp.user.password,
  );
  const handoff = await client.get(callback);
  assert.equal(handoff.status, 302, `the callback failed: ${handoff.status} ${handoff.body}`);
  const handoffUrl = new URL(handoff.headers.location ?? '');
  assert.equal(`${handoffUrl.origin}${handoffUrl.pathname}`, `${appOrigin}${HANDOFF_PATH}`);
  const landed = await client.get(handoffUrl);
  assert.equal(landed.headers.location, `${appOrigin}${path}`, `the handoff failed: ${landed.body}`);
  const handle = client.jar.get(`app.localhost:${proxyPort}`, SESSION_COOKIE);
  assert.ok(handle !== undefined, 'no session cookie on the app host');
  const sessionId = new SessionHandles(split.sharedSecret).verify(handle);
  assert.ok(sessionId !== undefined, 'the session cookie does not verify');
  return sessionId;
}

/**
 * Calls the databroker's Get over `channelTls` (undefined: plaintext) with `token` as the bearer
 * (undefined: no authorization metadata); gives `OK` or the gRPC status name.
 */
async function databrokerGet(channelTls: DerivedTls | undefined, token: string | undefined): Promise<string> {
  const { credentials, options } = internalChannelCredentials(channelTls);
  const client = new grpc.Client(`127.0.0.1:${split.databrokerPort}`, credentials, options);
  const codec = createDatabrokerCodec();
  const metadata = new grpc.Metadata();
  if (token !== undefined) metadata.set('authorization', `Bearer ${token}`);
  try {
    return await new Promise<string>((resolve) =>
      client.makeUnaryRequest(
        methodPath('Get'),
        (message: { type: string; id: string }) => Buffer.from(codec.encode('GetRequest', message)),
        (bytes: Buffer) => codec.decode('GetResponse', bytes),
        { type: RECORD_TYPES.session, id: 'no-such-session' },
        metadata,
        { deadline: Date.now() + 5000 },
        (err) => resolve(err === null ? 'OK' : (grpc.status[err.code] ?? String(err.code))),
      ),
    );
  } finally {
    client.close();
  }
}

const DT_COOKIE = decisionCookieName(SESSION_COOKIE);

const Health = grpc.makeClientConstructor(HEALTH_SERVICE as unknown as grpc.ServiceDefinition, 'Health');

/** authorize's gRPC health status over `channelTls`, or the error's status name. */
async function authorizeHealth(channelTls: DerivedTls | undefined): Promise<string> {
  const { credentials, options } = internalChannelCredentials(channelTls);
  const client = new Health(`127.0.0.1:${split.authorizePort}`, credentials, options);
  const check = client['check'] as (
    request: { service: string },
    options: grpc.CallOptions,
    callback: (err: grpc.ServiceError | null, response?: { status: string }) => void,
  ) => void;
  try {
    return await new Promise<string>((resolve) =>
      check.call(client, { service: '' }, { deadline: Date.now() + 5000 }, (err, response) =>
        resolve(err === null ? String(response?.status) : (grpc.status[err.code] ?? String(err.code))),
      ),
    );
  } finally {
    client.close();
  }
}

/** A counter from the proxy's Envoy admin /stats (0 when absent). */
async function envoyCounter(name: string): Promise<number> {
  const pattern = `^${name.replace(/\./g, '\\.')}$`;
  const { body } = await adminRequest(split.envoyAdminUrl, `/stats?filter=${encodeURIComponent(pattern)}`, {
    timeoutMs: 5000,
  });
  const match = new RegExp(`^${name.replace(/\./g, '\\.')}: (\\d+)$`, 'm').exec(body);
  return match === null ? 0 : Number(match[1]);
}

describe('split services (four processes, tls_derive)', () => {
  let assertion = '';

  test('a signed-in request reaches the upstream with a verifiable assertion; sign-out ends the session', () =>
    explained(async () => {
      const client = new EnvoyClient(split.proxyPort);
      const sessionId = await signIn(client, '/page?q=1');
      const answer = await client.get(`${split.appOrigin}/page?q=1`);
      assert.equal(answer.status, 200, `the signed-in request failed: ${answer.body}\n${split.outputs()}`);
      const seen = (JSON.parse(answer.body) as EchoResponse).headers;
      const token = seen['x-portcullis-jwt-assertion'];
      assert.equal(typeof token, 'string', 'the upstream received no identity assertion');
      assertion = String(token);
      const jwks = await client.get(`${split.appOrigin}/.well-known/portcullis/jwks.json`);
      assert.equal(jwks.status, 200, jwks.body);
      const host = `app.localhost:${split.proxyPort}`;
      const { payload } = await jwtVerify(assertion, createLocalJWKSet(JSON.parse(jwks.body)), {
        issuer: host,
        audience: host,
      });
      assert.equal(payload['email'], 'alice@example.com');
      assert.equal(payload['sid'], sessionId);

      const ended = await client.post(
        `${split.appOrigin}${SIGN_OUT_PATH}`,
        new URLSearchParams({ [CSRF_PARAM]: signOutToken(split.sharedSecret, sessionId) }),
      );
      assert.ok([200, 302].includes(ended.status), `sign-out failed: ${ended.status} ${ended.body}`);
      const handle = `${SESSION_COOKIE}=${new SessionHandles(split.sharedSecret).issue(sessionId)}`;
      const replayed = await new EnvoyClient(split.proxyPort).get(`${split.appOrigin}/page`, {
        cookie: handle,
      });
      assert.equal(replayed.status, 302, `the old cookie still works after sign-out: ${replayed.body}`);
      assert.ok(String(replayed.headers.location).startsWith(`${split.authenticateOrigin}${SIGN_IN_PATH}`));
    }));

  test("the fast path works across split services: the proxy's Envoy decides repeat requests, and a sign-out through authenticate stops the old cookies", () =>
    explained(async () => {
      const client = new EnvoyClient(split.proxyPort);
      const sessionId = await signIn(client, '/fast');
      const host = `app.localhost:${split.proxyPort}`;
      // Authorize (its own process) mints once the revocation margin of the sign-in has passed.
      await waitFor(
        async () => {
          await client.get(`${split.appOrigin}/fast`);
          return client.jar.get(host, DT_COOKIE);
        },
        { what: 'a decision cookie from the authorize process', timeoutMs: 10_000, intervalMs: 100 },
      );
      const checks = await envoyCounter('http.ingress.ext_authz.ok');
      for (let i = 0; i < 5; i += 1) {
        const answer = await client.get(`${split.appOrigin}/fast/${i}`);
        assert.equal(answer.status, 200, answer.body);
      }
      assert.equal(
        await envoyCounter('http.ingress.ext_authz.ok'),
        checks,
        "the proxy's Envoy asked authorize",
      );
      const kept = `${SESSION_COOKIE}=${client.jar.get(host, SESSION_COOKIE) ?? ''}; ${DT_COOKIE}=${client.jar.get(host, DT_COOKIE) ?? ''}`;
      const ended = await client.post(
        `${split.appOrigin}${SIGN_OUT_PATH}`,
        new URLSearchParams({ [CSRF_PARAM]: signOutToken(split.sharedSecret, sessionId) }),
      );
      assert.ok([200, 302].includes(ended.status), `sign-out failed: ${ended.status} ${ended.body}`);
      // The proxy process learns it from the databroker's change feed and pushes it to its Envoy.
      await waitFor(
        async () =>
          (await new EnvoyClient(split.proxyPort).get(`${split.appOrigin}/after`, { cookie: kept }))
            .status === 302,
        { what: "the proxy's Envoy to refuse the signed-out cookies", timeoutMs: 2_000, intervalMs: 10 },
      );
    }));

  test('the databroker refuses internal calls without a valid token and answers a valid one', () =>
    explained(async () => {
      const secret = split.sharedSecret;
      assert.equal(await databrokerGet(tls, undefined), 'UNAUTHENTICATED', 'no token');
      const expired = await mintInternalToken(secret, 'databroker', Date.now() - 10 * 60_000);
      assert.equal(await databrokerGet(tls, expired), 'UNAUTHENTICATED', 'an expired token');
      assert.ok(assertion !== '', 'the sign-in test left no user assertion');
      assert.equal(await databrokerGet(tls, assertion), 'UNAUTHENTICATED', 'a user assertion');
      const forAuthorize = await mintInternalToken(secret, 'authorize', Date.now());
      assert.equal(await databrokerGet(tls, forAuthorize), 'UNAUTHENTICATED', "another service's token");
      assert.equal(await databrokerGet(tls, await mintInternalToken(secret, 'databroker', Date.now())), 'OK');
    }));

  test('derived TLS verifies: another secret and plaintext fail; authorize health answers SERVING', () =>
    explained(async () => {
      const other = await deriveInternalTls(new Uint8Array(32).fill(7), SPLIT_TLS_NAME);
      const valid = await mintInternalToken(split.sharedSecret, 'databroker', Date.now());
      assert.equal(await databrokerGet(other, valid), 'UNAVAILABLE', "another secret's CA");
      assert.equal(await databrokerGet(undefined, valid), 'UNAVAILABLE', 'plaintext');
      assert.equal(await authorizeHealth(tls), 'SERVING');
      assert.equal(await authorizeHealth(other), 'UNAVAILABLE');
      // The proxy's Envoy reached authorize (Check) and authenticate (sign-in) over verified TLS.
      for (const cluster of [AUTHORIZE_CLUSTER, OWN_HTTP_CLUSTER]) {
        assert.ok(
          (await envoyCounter(`cluster.${cluster}.ssl.handshake`)) >= 1,
          `${cluster}: no TLS handshake`,
        );
        assert.equal(await envoyCounter(`cluster.${cluster}.ssl.fail_verify_error`), 0, cluster);
      }
    }));

  test('with the databroker killed a signed-in request answers 503 (never a sign-in redirect), public routes work, and it recovers after a restart', (t) =>
    explained(async () => {
      const client = new EnvoyClient(split.proxyPort);
      await signIn(client, '/');
      assert.equal((await client.get(`${split.appOrigin}/`)).status, 200);
      const proxy = split.processes.proxy;
      assert.doesNotMatch(proxy.output(), /revocations cannot be seen|change feed is lost/);
      await split.processes.databroker.stop('SIGKILL');
      const killedAt = Date.now();
      const seen: number[] = [];
      await waitFor(
        async () => {
          const answer = await client.get(`${split.appOrigin}/`, { accept: 'application/json' });
          seen.push(answer.status);
          return answer.status === 503;
        },
        { what: 'a signed-in request to answer 503 with the databroker down', timeoutMs: 10_000 },
      );
      const elapsed = Date.now() - killedAt;
      // Before authorize notices the outage its cached session may still answer; never a sign-in loop.
      assert.ok(!seen.includes(302), `answers while the databroker was down: ${seen.join(', ')}`);
      // Past the (zero) outage grace it stays 503, for API clients and browsers alike.
      for (const accept of ['application/json', 'text/html', 'application/json']) {
        const answer = await client.get(`${split.appOrigin}/`, { accept });
        assert.equal(answer.status, 503, `${accept}: ${answer.status} ${answer.body}`);
      }
      const open = await client.get(`${split.publicOrigin}/`);
      assert.equal(open.status, 200, `the public route failed with the databroker down: ${open.body}`);
      // The proxy follows the databroker's change feed for the fast path's revocations: it noticed.
      await waitFor(async () => proxy.output().includes('the session change feed is lost'), {
        what: "the proxy's revocation feed to notice the databroker is gone",
        timeoutMs: 10_000,
      });

      // A restarted (memory) databroker has lost the session. Authorize and authenticate reconnect by
      // themselves (their channels retry within the client's 2 s backoff cap): the old cookie is then
      // sent to sign in, and signing in again works.
      await split.restartDatabroker();
      const restartedAt = Date.now();
      await waitFor(async () => (await client.get(`${split.appOrigin}/`)).status === 302, {
        what: 'the old cookie to be sent to sign in once the databroker is back',
        timeoutMs: 10_000,
      });
      await waitFor(async () => (await signIn(new EnvoyClient(split.proxyPort), '/after')) !== '', {
        what: 'a new sign-in to work once the databroker is back',
        timeoutMs: 10_000,
        intervalMs: 200,
      });
      t.diagnostic(
        `503 ${elapsed} ms after the kill; signed in again ${Date.now() - restartedAt} ms after the restart`,
      );
    }));
});

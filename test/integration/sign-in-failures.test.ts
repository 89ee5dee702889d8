/**
 * Sign-in when the identity provider misbehaves (issue 24 item 9), with every real part:
 * Portcullis all-in-one and its real Envoy, the test IdP (oidc-provider), browserless (fetch-style
 * requests with a cookie jar through Envoy's listener; the IdP's login form filled by
 * completeLogin). For each misbehaviour the user gets a clear error page (text/html, the request
 * id, a "Try again" link back to where they were going), no session is stored, no session cookie
 * is set, and Portcullis keeps serving: a public route answers 200 and a later sign-in works.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startAllInOne, type AllInOne } from '../../src/cmd/all-in-one.js';
import { escapeHtml } from '../../src/shared/html-page.js';
import { recordingLogger } from '../../src/shared/logger.js';
import { completeLogin } from '../support/idp-login.js';
import { freePort, freePortPair } from '../support/ports.js';
import { storedSessionCount } from '../support/session-store.js';
import {
  EnvoyClient,
  SESSION_COOKIE,
  startSignInRig,
  type Answer,
  type SignInRig,
} from '../support/sign-in-envoy.js';
import type { IdTokenTamper } from '../support/test-idp.js';

/** Each IdP call's deadline here; the slow IdP waits far longer. */
const IDP_TIMEOUT_MS = 1_000;
const SLOW_IDP_MS = 6_000;
const PATH = '/reports/q3?view=full&sort=desc';

describe('sign-in when the identity provider misbehaves (through Envoy)', () => {
  let rig: SignInRig;
  before(async () => {
    rig = await startSignInRig({ idpTimeoutMs: IDP_TIMEOUT_MS });
  });
  after(async () => {
    await rig.stop();
  });

  const original = (): string => `${rig.appOrigin}${PATH}`;

  /**
   * Asserts `answer` is the error page the user must get: `status`, text/html, a request id (which
   * is returned), a "Try again" link to `retry`, no session cookie set; and that no session exists
   * and the client holds no session cookie.
   */
  async function assertFailurePage(
    answer: Answer,
    client: EnvoyClient,
    status: number,
    retry: string,
  ): Promise<string> {
    assert.equal(answer.status, status, answer.body);
    assert.match(String(answer.headers['content-type']), /^text\/html/);
    const requestId = /Request id: <code>([\w.:-]+)<\/code>/.exec(answer.body)?.[1];
    assert.ok(requestId !== undefined, `the page shows no request id:\n${answer.body}`);
    assert.ok(
      answer.body.includes(`href="${escapeHtml(retry)}">Try again</a>`),
      `the page has no "Try again" link to ${retry}:\n${answer.body}`,
    );
    const setsSession = answer.setCookies.some((c) => /^_portcullis=[^;]/.test(c));
    assert.ok(!setsSession, `a session cookie was set: ${answer.setCookies.join(' | ')}`);
    assert.equal(await storedSessionCount(rig.portcullis.running.sessions), 0, 'a session was stored');
    for (const host of [new URL(rig.authenticateOrigin).host, new URL(rig.appOrigin).host])
      assert.equal(
        client.jar.get(host, SESSION_COOKIE),
        undefined,
        `the client holds a session cookie for ${host}`,
      );
    return requestId;
  }

  /**
   * The warning Portcullis logged for `requestId` (the id on the page is the one in the log), with
   * `message`; gives its `reason`.
   */
  function assertLogged(requestId: string, message: string): string {
    const line = rig.portcullis.logs.find(
      (record) => record.msg === message && (record.obj as { requestId?: unknown }).requestId === requestId,
    );
    assert.ok(line !== undefined, `no "${message}" log line with request id ${requestId}`);
    return String((line.obj as { reason?: unknown }).reason);
  }

  /** A public route answers 200; with `signIn`, a whole sign-in works again (its session is removed after). */
  async function assertStillServing(options: { signIn: boolean } = { signIn: true }): Promise<void> {
    const client = rig.client();
    const publicAnswer = await client.get(`${rig.publicOrigin}/health`);
    assert.equal(publicAnswer.status, 200, `the public route failed: ${publicAnswer.body}`);
    if (!options.signIn) return;
    const { sessionId } = await rig.signIn(client, PATH);
    await rig.portcullis.running.sessions.delete(sessionId);
  }

  /** A sign-in started and completed at the IdP: the callback URL (not yet visited) and the flow cookie. */
  async function reachCallback(client: EnvoyClient): Promise<{ callback: URL; flowCookie: string }> {
    const { answer } = await rig.startSignIn(client, PATH);
    assert.equal(answer.status, 302, answer.body);
    const [flowCookie] = answer.setCookies;
    assert.ok(flowCookie !== undefined, 'the sign-in set no flow cookie');
    const callback = await completeLogin(
      answer.headers.location ?? '',
      rig.idp.user.username,
      rig.idp.user.password,
    );
    return { callback, flowCookie: flowCookie.split(';')[0] ?? '' };
  }

  // The first two run before any sign-in: discovery happens on the first one, then it is cached.
  test('the IdP down at sign-in start (discovery fails): 502 page, no session', async () => {
    await rig.idp.down();
    const client = rig.client();
    try {
      const { signInUrl, answer } = await rig.startSignIn(client, PATH);
      // "Try again" repeats the sign-in, which leads back to the original URL.
      const requestId = await assertFailurePage(answer, client, 502, signInUrl.href);
      assert.match(answer.body, /could not reach the identity provider: .*the IdP could not be reached</);
      assertLogged(requestId, 'identity provider unavailable for sign-in');
    } finally {
      await rig.idp.up();
    }
    // The next test's sign-in would cache discovery; the good sign-in after an outage is shown there.
    await assertStillServing({ signIn: false });
  });

  test('a slow IdP at sign-in start: the page comes within the deadline, not after the delay', async () => {
    rig.idp.slow(SLOW_IDP_MS);
    const client = rig.client();
    try {
      const started = performance.now();
      const { signInUrl, answer } = await rig.startSignIn(client, PATH);
      const elapsed = performance.now() - started;
      await assertFailurePage(answer, client, 502, signInUrl.href);
      assert.match(answer.body, /the IdP did not answer in time/);
      assert.ok(elapsed < IDP_TIMEOUT_MS + 1_500, `the page took ${Math.round(elapsed)} ms`);
    } finally {
      rig.idp.slow(0);
    }
    await assertStillServing();
  });

  test('the IdP down at the callback (the token call fails): 502 page, no session', async () => {
    const client = rig.client();
    const { callback } = await reachCallback(client);
    await rig.idp.down();
    try {
      const answer = await client.get(callback);
      const requestId = await assertFailurePage(answer, client, 502, original());
      assert.match(answer.body, /identity provider is unavailable/);
      assert.match(answer.body, /the IdP could not be reached</);
      assertLogged(requestId, 'sign-in failed at the identity provider');
    } finally {
      await rig.idp.up();
    }
    await assertStillServing();
  });

  // Each with the check that must refuse it (openid-client's words, in the log line).
  const spoiled: readonly [IdTokenTamper, string, RegExp][] = [
    ['wrong-issuer', 'from another issuer', /"iss"/],
    ['bad-nonce', 'with a nonce that is not the flow’s', /"nonce"/],
    ['unsigned', 'that is unsigned (alg none)', /"alg"/],
    ['expired', 'that has expired', /"exp"/],
    ['bad-signature', 'whose signature does not verify', /signature verification failed/],
    ['unknown-kid', 'signed with a key the IdP does not publish', /no applicable keys/],
  ];
  for (const [mode, what, check] of spoiled) {
    test(`an ID token ${what} is refused: 401 page, no session`, async () => {
      const client = rig.client();
      const { callback } = await reachCallback(client);
      const grantsBefore = rig.idp.counts().grants['authorization_code'] ?? 0;
      rig.idp.tamperIdTokens(mode);
      try {
        const answer = await client.get(callback);
        const requestId = await assertFailurePage(answer, client, 401, original());
        assert.match(answer.body, /identity provider refused the sign-in/);
        const reason = assertLogged(requestId, 'sign-in failed at the identity provider');
        assert.match(reason, check);
        // The IdP did issue tokens: Portcullis refused them.
        assert.equal((rig.idp.counts().grants['authorization_code'] ?? 0) - grantsBefore, 1);
      } finally {
        rig.idp.tamperIdTokens('none');
      }
      await assertStillServing();
    });
  }

  for (const [error, status] of [
    ['access_denied', 401],
    ['temporarily_unavailable', 400],
  ] as const) {
    test(`the IdP answering error=${error} on the callback: ${status} page saying so, no session`, async () => {
      const client = rig.client();
      const tokenCalls = rig.idp.counts().grants['authorization_code'] ?? 0;
      rig.idp.denyLogins(error);
      let callback: URL;
      try {
        ({ callback } = await reachCallback(client));
      } finally {
        rig.idp.denyLogins(undefined);
      }
      assert.equal(
        callback.searchParams.get('error'),
        error,
        `the IdP did not answer with an error: ${callback.href}`,
      );
      const answer = await client.get(callback);
      await assertFailurePage(answer, client, status, original());
      assert.ok(answer.body.includes(escapeHtml(error)), `the page does not say "${error}"`);
      assert.equal(rig.idp.counts().grants['authorization_code'] ?? 0, tokenCalls, 'a code was exchanged');
      await assertStillServing();
    });
  }

  test('a replayed state (the same callback URL again, with its flow cookie) is refused without asking the IdP', async () => {
    const client = rig.client();
    const { callback, flowCookie } = await reachCallback(client);
    const first = await client.get(callback);
    assert.equal(first.status, 302, first.body);
    const grants = rig.idp.counts().grants['authorization_code'] ?? 0;
    // The attacker's copy: the same callback URL and the flow cookie, in a jar without a session.
    const attacker = rig.client();
    attacker.jar.store(callback, new Response(null, { headers: [['set-cookie', flowCookie]] }));
    const sessionsBefore = await storedSessionCount(rig.portcullis.running.sessions);
    const replay = await attacker.get(callback);
    assert.equal(replay.status, 400, replay.body);
    assert.match(replay.body, /already used/);
    assert.ok(replay.body.includes(`href="${escapeHtml(original())}">Try again</a>`));
    assert.ok(!replay.setCookies.some((c) => /^_portcullis=[^;]/.test(c)), 'the replay set a session cookie');
    assert.equal(
      await storedSessionCount(rig.portcullis.running.sessions),
      sessionsBefore,
      'the replay stored a session',
    );
    assert.equal(rig.idp.counts().grants['authorization_code'] ?? 0, grants, 'the replay reached the IdP');
    await rig.portcullis.running.sessions.delete(rig.sessionIdOf(client) ?? '');
    await assertStillServing();
  });

  test('a replayed code in a fresh flow (its own state and flow cookie) is refused by the IdP: 401, no session', async () => {
    const victim = rig.client();
    const { callback: used } = await reachCallback(victim);
    assert.equal((await victim.get(used)).status, 302);
    await rig.portcullis.running.sessions.delete(rig.sessionIdOf(victim) ?? '');
    // A new flow passes Portcullis's own checks (unused state, its flow cookie, PKCE verifier)...
    const attacker = rig.client();
    const { answer } = await rig.startSignIn(attacker, PATH);
    const state = new URL(answer.headers.location ?? '').searchParams.get('state') ?? '';
    const forged = new URL(used);
    forged.searchParams.set('state', state);
    const errors = rig.idp.counts().grantErrors['authorization_code'] ?? 0;
    // ...so the used code goes to the IdP, which refuses it.
    const replay = await attacker.get(forged);
    const requestId = await assertFailurePage(replay, attacker, 401, original());
    assert.match(assertLogged(requestId, 'sign-in failed at the identity provider'), /invalid_grant/);
    assert.equal(
      (rig.idp.counts().grantErrors['authorization_code'] ?? 0) - errors,
      1,
      'the IdP was not asked',
    );
    await assertStillServing();
  });

  test('a replayed code at a second replica (same callback URL and flow cookie, a replay guard that never saw it) is refused by the IdP', async (t) => {
    const victim = rig.client();
    const { callback, flowCookie } = await reachCallback(victim);
    assert.equal((await victim.get(callback)).status, 302);
    const victimSession = rig.sessionIdOf(victim);
    assert.ok(victimSession !== undefined);
    const refresh = (): Promise<string> => rig.portcullis.running.authenticate.refreshNow(victimSession);
    assert.equal(await refresh(), 'refreshed', 'the grant did not work before the replay');
    // Another replica with the same secrets: it opens the state and the flow cookie, and its
    // in-memory replay guard has not seen this flow, so only the IdP's single-use code stops it.
    const replica = await startReplica(t);
    const attacker = new EnvoyClient(replica.authenticate.endpoint().port);
    attacker.jar.store(callback, new Response(null, { headers: [['set-cookie', flowCookie]] }));
    const errors = rig.idp.counts().grantErrors['authorization_code'] ?? 0;
    const replay = await attacker.get(callback);
    assert.equal(replay.status, 401, replay.body);
    assert.match(String(replay.headers['content-type']), /^text\/html/);
    assert.ok(replay.body.includes(`href="${escapeHtml(original())}">Try again</a>`));
    assert.ok(!replay.setCookies.some((c) => /^_portcullis=[^;]/.test(c)), 'the replay set a session cookie');
    assert.equal(await storedSessionCount(replica.sessions), 0, 'the replica stored a session');
    assert.equal(
      (rig.idp.counts().grantErrors['authorization_code'] ?? 0) - errors,
      1,
      'the IdP was not asked',
    );
    // The IdP revokes what the reused code granted (RFC 6749 10.5): the victim's next refresh is
    // refused, and Portcullis ends that session.
    assert.equal(await refresh(), 'ended');
    assert.equal(await rig.portcullis.running.sessions.get(victimSession), undefined);
    await assertStillServing();
  });

  // Last: the IdP answers the abandoned token request after its delay, which would upset the
  // grant counts of any test after this one.
  test('a slow IdP at the callback: the page comes within the deadline, not after the delay', async () => {
    const client = rig.client();
    const { callback } = await reachCallback(client);
    rig.idp.slow(SLOW_IDP_MS);
    try {
      const started = performance.now();
      const answer = await client.get(callback);
      const elapsed = performance.now() - started;
      const requestId = await assertFailurePage(answer, client, 502, original());
      assert.match(answer.body, /the IdP did not answer in time/);
      assert.ok(elapsed < IDP_TIMEOUT_MS + 1_500, `the page took ${Math.round(elapsed)} ms`);
      assertLogged(requestId, 'sign-in failed at the identity provider');
    } finally {
      rig.idp.slow(0);
    }
    await assertStillServing();
  });

  /** A second all-in-one (no Envoy) with the rig's config and secrets, stopped when `t` ends. */
  async function startReplica(t: { after(fn: () => Promise<void>): void }): Promise<AllInOne> {
    const dir = mkdtempSync(join(tmpdir(), 'portcullis-replica-'));
    const configPath = join(dir, 'config.yaml');
    const [address, grpc, admin] = [await freePort(), await freePortPair(), await freePort()];
    writeFileSync(
      configPath,
      stringify({
        ...rig.config,
        insecure_server: true,
        address: `127.0.0.1:${address}`,
        grpc_address: `127.0.0.1:${grpc}`,
        envoy_admin_address: `127.0.0.1:${admin}`,
      }),
    );
    const replica = await startAllInOne({
      configPath,
      env: {},
      logger: recordingLogger(),
      withoutEnvoy: true,
      idpTimeoutMs: IDP_TIMEOUT_MS,
    });
    t.after(async () => {
      await replica.stop();
      rmSync(dir, { recursive: true, force: true });
    });
    return replica;
  }
});

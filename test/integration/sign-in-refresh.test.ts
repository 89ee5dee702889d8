/**
 * Session refresh with every real part (issue 24): sessions made by a real sign-in through
 * Portcullis all-in-one and its Envoy at the test IdP (oidc-provider, rotating refresh tokens), then
 * refreshed through the running authenticate service (`refreshNow`, the refresher's single flight).
 * Two concurrent refreshes make one refresh_token grant at the IdP (with rotation a second grant
 * would spend a rotated-out token); an IdP that refuses the refresh ends the session; an IdP that
 * is down keeps it, and the session keeps working until the IdP is back. (A slow IdP's deadline is
 * shown at sign-in, sign-in-failures.test.ts: here an abandoned grant answered late would rotate
 * the token under a later test.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Session } from '../../src/session/session.js';
import { startSignInRig, type EnvoyClient, type SignInRig } from '../support/sign-in-envoy.js';

const IDP_TIMEOUT_MS = 1_000;

describe('session refresh against a real IdP (through Envoy)', () => {
  let rig: SignInRig;
  before(async () => {
    rig = await startSignInRig({ idp: { rotateRefreshTokens: true }, idpTimeoutMs: IDP_TIMEOUT_MS });
  });
  after(async () => {
    await rig.stop();
  });

  const refreshGrants = (): number => rig.idp.counts().grants['refresh_token'] ?? 0;
  const refusedRefreshes = (): number => rig.idp.counts().grantErrors['refresh_token'] ?? 0;
  const stored = (id: string): Promise<Session | undefined> => rig.portcullis.running.sessions.get(id);
  const refreshNow = (id: string): Promise<string> => rig.portcullis.running.authenticate.refreshNow(id);
  const appStatus = async (client: EnvoyClient): Promise<number> =>
    (await client.get(`${rig.appOrigin}/`)).status;

  test('two concurrent refreshes of one session make one refresh_token grant at the IdP', async () => {
    const client = rig.client();
    const { sessionId } = await rig.signIn(client, '/');
    const before = await stored(sessionId);
    const grants = refreshGrants();
    // Slow enough that both calls are in flight while the IdP still holds the first.
    rig.idp.slow(200);
    let outcomes: string[];
    try {
      outcomes = await Promise.all([refreshNow(sessionId), refreshNow(sessionId)]);
    } finally {
      rig.idp.slow(0);
    }
    assert.deepEqual(outcomes, ['refreshed', 'refreshed']);
    assert.equal(refreshGrants() - grants, 1, 'the IdP saw more than one refresh grant');
    assert.equal(refusedRefreshes(), 0, 'a refresh was refused');
    const after = await stored(sessionId);
    assert.ok(after?.tokens !== undefined && before?.tokens !== undefined);
    assert.notDeepEqual(after.tokens, before.tokens, 'the session kept its old tokens');
    assert.equal(await appStatus(client), 200, 'the refreshed session stopped working');
    // The rotated refresh token was stored: the next refresh works and is one more grant.
    assert.equal(await refreshNow(sessionId), 'refreshed');
    assert.equal(refreshGrants() - grants, 2);
    assert.equal(refusedRefreshes(), 0);
  });

  test('an IdP that is down keeps the session, which refreshes once the IdP is back', async () => {
    const client = rig.client();
    const { sessionId } = await rig.signIn(client, '/');
    const grants = refreshGrants();
    await rig.idp.down();
    try {
      assert.equal(await refreshNow(sessionId), 'kept');
    } finally {
      await rig.idp.up();
    }
    assert.ok((await stored(sessionId)) !== undefined, 'the session ended while the IdP was down');
    assert.equal(await appStatus(client), 200, 'the session stopped working while the IdP was down');

    assert.equal(await refreshNow(sessionId), 'refreshed', 'the refresh failed after the IdP came back');
    assert.equal(refreshGrants() - grants, 1);
    assert.equal(await appStatus(client), 200);
  });

  test('a refresh the IdP refuses (refresh token revoked) ends the session', async () => {
    const client = rig.client();
    const { sessionId } = await rig.signIn(client, '/');
    assert.ok(rig.idp.revokeRefreshTokens('alice') > 0, 'the IdP had no refresh token of alice to revoke');
    const refused = refusedRefreshes();
    assert.equal(await refreshNow(sessionId), 'ended');
    assert.equal(refusedRefreshes() - refused, 1, 'the IdP did not refuse a refresh');
    assert.equal(await stored(sessionId), undefined, 'the session is still stored');
    const answer = await client.get(`${rig.appOrigin}/`);
    assert.equal(answer.status, 302, 'the ended session still works');
    assert.ok(String(answer.headers.location).startsWith(`${rig.authenticateOrigin}/.portcullis/sign_in`));
    // A new sign-in works (and makes a new grant).
    await rig.signIn(rig.client(), '/');
  });
});

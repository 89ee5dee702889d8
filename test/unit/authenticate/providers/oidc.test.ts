// The OIDC ProviderClient against a real oidc-provider on loopback (test/support/test-idp.ts):
// discovery and its cache, the authorization URL, the code exchange with every ID-token check,
// refresh, revocation, RP-initiated logout, and an IdP that is down or slow.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { calculatePKCECodeChallenge, randomNonce, randomPKCECodeVerifier, randomState } from 'openid-client';
import { createProviderClient } from '../../../../src/authenticate/providers/client.js';
import type { ProviderClientOptions } from '../../../../src/authenticate/providers/client.js';
import { IdpError } from '../../../../src/authenticate/types.js';
import type { FlowChecks, ProviderClient, ProviderConfig } from '../../../../src/authenticate/types.js';
import { completeLogin, completeLogout, CookieJar } from '../../../support/idp-login.js';
import { startTestIdp } from '../../../support/test-idp.js';
import type { IdTokenTamper, TestIdp } from '../../../support/test-idp.js';

const REDIRECT = 'http://127.0.0.1:1/oauth2/callback';
const SIGNED_OUT = 'http://127.0.0.1:1/.portcullis/signed_out';

function checks(): FlowChecks {
  return { state: randomState(), nonce: randomNonce(), codeVerifier: randomPKCECodeVerifier() };
}

function providerConfig(idp: TestIdp, overrides: Partial<ProviderConfig> = {}): ProviderConfig {
  return {
    id: 'test',
    provider: 'oidc',
    providerUrl: new URL(idp.issuer),
    clientId: 'portcullis',
    clientSecret: 'portcullis-secret',
    scopes: undefined,
    requestParams: {},
    ...overrides,
  };
}

function client(idp: TestIdp, options: ProviderClientOptions = {}, overrides: Partial<ProviderConfig> = {}) {
  return createProviderClient(providerConfig(idp, overrides), { allowInsecureRequests: true, ...options });
}

/** Signs alice in at the IdP and returns the callback URL and the checks it must pass. */
async function signIn(
  provider: ProviderClient,
  jar?: CookieJar,
): Promise<{ callback: URL; checks: FlowChecks }> {
  const flow = checks();
  const url = await provider.authorizationUrl(REDIRECT, flow);
  const callback = await completeLogin(url, 'alice', 'alice-password', jar === undefined ? {} : { jar });
  return { callback, checks: flow };
}

async function rejectsWith(
  promise: Promise<unknown>,
  kind: IdpError['kind'],
  pattern?: RegExp,
): Promise<IdpError> {
  const err = await promise.then(
    () => assert.fail(`expected IdpError(${kind})`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof IdpError, `not an IdpError: ${String(err)}`);
  assert.equal(err.kind, kind, err.message);
  if (pattern !== undefined) assert.match(err.message, pattern);
  return err;
}

describe('OIDC provider client against oidc-provider', () => {
  let idp: TestIdp;
  before(async () => {
    idp = await startTestIdp({
      clients: [
        {
          clientId: 'portcullis',
          clientSecret: 'portcullis-secret',
          redirectUris: [REDIRECT],
          postLogoutRedirectUris: [SIGNED_OUT],
        },
        {
          clientId: 'post-client',
          clientSecret: 'post-secret',
          redirectUris: [REDIRECT],
          tokenEndpointAuthMethod: 'client_secret_post',
        },
      ],
      ttl: { accessToken: 120, idToken: 60 },
      accounts: [
        { username: 'bob', password: 'bob-password', groups: ['staff'], claims: { oid: 'bob-oid' } },
      ],
    });
  });
  after(async () => {
    assert.deepEqual(idp.serverErrors(), []);
    await idp.close();
  });

  test('the authorization URL carries state, nonce, the S256 challenge, default scopes and request params', async () => {
    const provider = client(
      idp,
      {},
      { requestParams: { login_hint: 'alice', state: 'evil', code_challenge: 'x' } },
    );
    const flow = checks();
    const url = await provider.authorizationUrl(REDIRECT, flow);
    assert.equal(url.origin + url.pathname, `${idp.issuer}/auth`);
    const q = url.searchParams;
    assert.equal(q.get('client_id'), 'portcullis');
    assert.equal(q.get('redirect_uri'), REDIRECT);
    assert.equal(q.get('response_type'), 'code');
    assert.equal(q.get('scope'), 'openid profile email offline_access');
    assert.equal(q.get('state'), flow.state);
    assert.equal(q.get('nonce'), flow.nonce);
    assert.equal(q.get('code_challenge_method'), 'S256');
    assert.equal(q.get('code_challenge'), await calculatePKCECodeChallenge(flow.codeVerifier));
    assert.equal(q.get('login_hint'), 'alice');
    assert.equal(q.get('access_type'), null, 'access_type=offline is for Google only');
    assert.equal(q.get('response_mode'), null);
    assert.equal(provider.formPost, false);
  });

  test('idp_scopes replace the defaults', async () => {
    const url = await client(idp, {}, { scopes: ['openid', 'email'] }).authorizationUrl(REDIRECT, checks());
    assert.equal(url.searchParams.get('scope'), 'openid email');
  });

  test('a full sign-in: code exchange with userinfo merged, then refresh, revocation and logout', async () => {
    const provider = client(idp);
    const jar = new CookieJar();
    const { callback, checks: flow } = await signIn(provider, jar);
    const before = idp.counts();
    const result = await provider.exchangeCode(callback, REDIRECT, flow);
    assert.equal(result.userId, 'alice');
    assert.equal(result.claims['email'], 'alice@example.com');
    assert.equal(result.emailVerified, true, 'the IdP says email_verified: true');
    assert.equal(result.claims['name'], 'Alice Example');
    assert.deepEqual(result.claims['groups'], ['admins', 'staff']);
    assert.equal(result.claims['nonce'], flow.nonce);
    assert.ok(
      result.accessToken !== undefined && result.refreshToken !== undefined && result.idToken !== undefined,
    );
    const now = Date.now();
    assert.ok(Math.abs((result.accessTokenExpiresAt ?? 0) - (now + 120_000)) < 5_000);
    assert.ok(Math.abs((result.idTokenExpiresAt ?? 0) - (now + 60_000)) < 5_000);
    const counts = idp.counts();
    assert.equal((counts.grants['authorization_code'] ?? 0) - (before.grants['authorization_code'] ?? 0), 1);
    assert.equal(counts.userinfo - before.userinfo, 1);

    const refreshed = await provider.refresh(result.refreshToken ?? '');
    assert.equal(idp.counts().grants['refresh_token'], 1);
    assert.equal(refreshed.userId, 'alice');
    assert.notEqual(refreshed.accessToken, result.accessToken);
    assert.ok(refreshed.idToken !== undefined);

    const revocations = idp.counts().revocation;
    await provider.revoke(refreshed.refreshToken ?? result.refreshToken ?? '', 'refresh_token');
    assert.equal(idp.counts().revocation, revocations + 1);
    await rejectsWith(
      provider.refresh(refreshed.refreshToken ?? result.refreshToken ?? ''),
      'refused',
      /invalid_grant/,
    );

    const end = await provider.endSessionUrl(result.idToken, SIGNED_OUT);
    assert.ok(end !== undefined);
    assert.equal(end.origin + end.pathname, `${idp.issuer}/session/end`);
    assert.equal(end.searchParams.get('id_token_hint'), result.idToken);
    assert.equal(end.searchParams.get('post_logout_redirect_uri'), SIGNED_OUT);
    assert.equal(end.searchParams.get('client_id'), 'portcullis');
    const landed = await completeLogout(end, jar);
    assert.equal(landed?.href, SIGNED_OUT);
    assert.equal(idp.counts().endSession, 1);
    assert.equal(idp.counts().endSessionSuccess, 1);
  });

  test('the login form checks the password; another account signs in as itself (oid wins over sub)', async () => {
    const provider = client(idp);
    const url = await provider.authorizationUrl(REDIRECT, checks());
    await assert.rejects(completeLogin(url, 'alice', 'wrong-password'), /refused the login/);
    await assert.rejects(completeLogin(url, 'mallory', 'alice-password'), /refused the login/);
    const flow = checks();
    const callback = await completeLogin(
      await provider.authorizationUrl(REDIRECT, flow),
      'bob',
      'bob-password',
    );
    const result = await provider.exchangeCode(callback, REDIRECT, flow);
    assert.equal(result.userId, 'bob-oid');
    assert.equal(result.claims['sub'], 'bob');
    assert.deepEqual(result.claims['groups'], ['staff']);
  });

  test('a form_post provider (apple) gets the callback posted, and the code exchange accepts it', async () => {
    const provider = client(idp, {}, { provider: 'apple', scopes: ['openid', 'email'] });
    assert.equal(provider.formPost, true);
    const flow = checks();
    const url = await provider.authorizationUrl(REDIRECT, flow);
    assert.match(url.search, /scope=openid%20email/);
    const posted = await completeLogin(url, 'alice', 'alice-password');
    assert.equal(posted.origin + posted.pathname, REDIRECT);
    assert.equal(posted.searchParams.get('state'), flow.state);
    const result = await provider.exchangeCode(posted, REDIRECT, flow);
    assert.equal(result.userId, 'alice');
  });

  test('a client registered for client_secret_post signs in (basic is tried, then post for good)', async () => {
    const provider = client(idp, {}, { clientId: 'post-client', clientSecret: 'post-secret' });
    const first = await signIn(provider);
    const result = await provider.exchangeCode(first.callback, REDIRECT, first.checks);
    assert.equal(result.userId, 'alice');
    const errors = idp.counts().grantErrors['authorization_code'] ?? 0;
    const second = await signIn(provider);
    await provider.exchangeCode(second.callback, REDIRECT, second.checks);
    assert.equal(idp.counts().grantErrors['authorization_code'] ?? 0, errors, 'post is remembered');
  });

  test('a revoked refresh token is refused; an IdP that is down during refresh is unavailable', async () => {
    const provider = client(idp, { timeoutMs: 2_000 });
    const { callback, checks: flow } = await signIn(provider);
    const result = await provider.exchangeCode(callback, REDIRECT, flow);
    await idp.down();
    try {
      await rejectsWith(provider.refresh(result.refreshToken ?? ''), 'unavailable');
    } finally {
      await idp.up();
    }
    assert.ok(idp.revokeRefreshTokens('alice') >= 1);
    await rejectsWith(provider.refresh(result.refreshToken ?? ''), 'refused');
  });

  const spoilt: readonly [IdTokenTamper, RegExp][] = [
    ['wrong-issuer', /iss/],
    ['bad-nonce', /nonce/],
    ['unsigned', /alg/],
    ['expired', /exp|timestamp/],
    ['bad-signature', /signature/i],
  ];
  for (const [mode, pattern] of spoilt) {
    test(`an ID token with ${mode} is refused`, async () => {
      const provider = client(idp);
      const { callback, checks: flow } = await signIn(provider);
      idp.tamperIdTokens(mode);
      try {
        const err = await rejectsWith(provider.exchangeCode(callback, REDIRECT, flow), 'refused');
        assert.match(`${err.message} ${String((err.cause as Error | undefined)?.message)}`, pattern);
      } finally {
        idp.tamperIdTokens('none');
      }
    });
  }

  test('state mismatch, an error callback and a replayed code are refused', async () => {
    const provider = client(idp);
    const { callback, checks: flow } = await signIn(provider);
    await rejectsWith(
      provider.exchangeCode(callback, REDIRECT, { ...flow, state: 'other' }),
      'refused',
      /state/,
    );
    await provider.exchangeCode(callback, REDIRECT, flow);
    await rejectsWith(provider.exchangeCode(callback, REDIRECT, flow), 'refused', /invalid_grant/);
    const denied = new URL(REDIRECT);
    denied.search = new URLSearchParams({
      error: 'access_denied',
      state: flow.state,
      iss: idp.issuer,
    }).toString();
    await rejectsWith(provider.exchangeCode(denied, REDIRECT, flow), 'refused', /access_denied/);
  });

  test('the wrong PKCE verifier is refused', async () => {
    const provider = client(idp);
    const { callback, checks: flow } = await signIn(provider);
    await rejectsWith(
      provider.exchangeCode(callback, REDIRECT, { ...flow, codeVerifier: randomPKCECodeVerifier() }),
      'refused',
      /invalid_grant/,
    );
  });

  test('the JWKS is fetched once and an unknown kid refetches it at most once per minute', async () => {
    const provider = client(idp);
    const jwks = idp.counts().jwks;
    for (let i = 0; i < 2; i += 1) {
      const { callback, checks: flow } = await signIn(provider);
      await provider.exchangeCode(callback, REDIRECT, flow);
    }
    assert.equal(idp.counts().jwks, jwks + 1, 'one JWKS fetch for two sign-ins');
    idp.tamperIdTokens('unknown-kid');
    try {
      for (let i = 0; i < 2; i += 1) {
        const { callback, checks: flow } = await signIn(provider);
        await rejectsWith(provider.exchangeCode(callback, REDIRECT, flow), 'refused');
      }
      assert.equal(idp.counts().jwks, jwks + 1, 'a fresh JWKS is not refetched for an unknown kid');
    } finally {
      idp.tamperIdTokens('none');
    }
  });

  test('discovery is cached: one fetch, and the IdP going down does not stop authorization URLs', async () => {
    const provider = client(idp);
    const discoveries = idp.counts().discovery;
    await provider.authorizationUrl(REDIRECT, checks());
    await Promise.all([
      provider.authorizationUrl(REDIRECT, checks()),
      provider.authorizationUrl(REDIRECT, checks()),
    ]);
    assert.equal(idp.counts().discovery, discoveries + 1);
    await idp.down();
    try {
      const url = await provider.authorizationUrl(REDIRECT, checks());
      assert.equal(url.origin, idp.issuer);
    } finally {
      await idp.up();
    }
  });

  test('re-discovery happens in the background after an hour and keeps the last good copy when the IdP is down', async () => {
    let now = 1_000_000;
    const provider = client(idp, { now: () => now }) as ProviderClient & { settled(): Promise<void> };
    await provider.authorizationUrl(REDIRECT, checks());
    const discoveries = idp.counts().discovery;
    now += 3_599_000;
    await provider.authorizationUrl(REDIRECT, checks());
    await provider.settled();
    assert.equal(idp.counts().discovery, discoveries, 'not yet an hour');
    now += 2_000;
    await idp.down();
    try {
      await provider.authorizationUrl(REDIRECT, checks());
      await provider.settled();
      await provider.authorizationUrl(REDIRECT, checks());
      await provider.settled();
    } finally {
      await idp.up();
    }
    now += 3_601_000;
    await provider.authorizationUrl(REDIRECT, checks());
    await provider.settled();
    assert.equal(idp.counts().discovery, discoveries + 1, 'one re-discovery after the failed one');
  });

  test('an IdP that is down before discovery is unavailable, and so is a slow one, within the timeout', async () => {
    await idp.down();
    try {
      await rejectsWith(client(idp).authorizationUrl(REDIRECT, checks()), 'unavailable', /discovery/);
    } finally {
      await idp.up();
    }
    const provider = client(idp, { timeoutMs: 300 });
    const { callback, checks: flow } = await signIn(provider);
    idp.slow(2_000);
    const started = Date.now();
    try {
      await rejectsWith(provider.exchangeCode(callback, REDIRECT, flow), 'unavailable', /in time/);
    } finally {
      idp.slow(0);
    }
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 1_500, `gave up after ${elapsed} ms`);
  });

  test('an http issuer is refused unless allowInsecureRequests', async () => {
    const provider = createProviderClient(providerConfig(idp));
    await rejectsWith(provider.authorizationUrl(REDIRECT, checks()), 'unavailable', /HTTPS/i);
  });
});

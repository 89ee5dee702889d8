// Each built-in provider's defaults and quirks, through createProviderClient with a fake fetch that
// serves discovery documents (the real IdPs cannot be reached from here).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createProviderClient } from '../../../../src/authenticate/providers/client.js';
import type { IdpProviderName } from '../../../../src/authenticate/providers/names.js';
import { IdpError } from '../../../../src/authenticate/types.js';
import type { FlowChecks, ProviderConfig } from '../../../../src/authenticate/types.js';

const CHECKS: FlowChecks = { state: 'st', nonce: 'nc', codeVerifier: 'v'.repeat(43) };
const REDIRECT = 'https://auth.example.com/oauth2/callback';

interface Call {
  readonly url: string;
  readonly method: string;
  readonly body: string;
}

/** A fetch that answers discovery for any base with endpoints under it, and records every call. */
function fakeIdp(extra: (base: string) => Record<string, unknown> = () => ({})) {
  const calls: Call[] = [];
  const fake: typeof fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const body = init?.body === undefined || init.body === null ? '' : String(init.body);
    calls.push({ url, method: init?.method ?? 'GET', body });
    const suffix = '/.well-known/openid-configuration';
    if (url.endsWith(suffix)) {
      const issuer = url.slice(0, -suffix.length);
      const at = (path: string) => `${issuer.replace(/\/$/, '')}${path}`;
      return Response.json({
        issuer,
        authorization_endpoint: at('/authorize'),
        token_endpoint: at('/token'),
        jwks_uri: at('/jwks'),
        ...extra(issuer),
      });
    }
    return new Response(null, { status: 200 });
  };
  return { calls, fake };
}

function config(provider: IdpProviderName, overrides: Partial<ProviderConfig> = {}): ProviderConfig {
  return {
    id: provider,
    provider,
    providerUrl: undefined,
    clientId: 'cid',
    clientSecret: 'secret',
    scopes: undefined,
    requestParams: {},
    ...overrides,
  };
}

async function authUrl(provider: IdpProviderName, overrides: Partial<ProviderConfig> = {}) {
  const { fake, calls } = fakeIdp();
  const url = await createProviderClient(config(provider, overrides), { fetch: fake }).authorizationUrl(
    REDIRECT,
    CHECKS,
  );
  return { url, calls };
}

describe('built-in providers', () => {
  test('google: its URL, scopes without offline_access, access_type=offline and consent', async () => {
    const { url, calls } = await authUrl('google');
    assert.equal(calls[0]?.url, 'https://accounts.google.com/.well-known/openid-configuration');
    assert.equal(url.searchParams.get('scope'), 'openid profile email');
    assert.equal(url.searchParams.get('access_type'), 'offline');
    assert.equal(url.searchParams.get('prompt'), 'select_account consent');
  });

  test('google: idp_request_params are merged over the defaults, keeping access_type', async () => {
    const { url } = await authUrl('google', { requestParams: { hd: 'example.com', prompt: 'consent' } });
    assert.equal(url.searchParams.get('hd'), 'example.com');
    assert.equal(url.searchParams.get('prompt'), 'consent');
    assert.equal(url.searchParams.get('access_type'), 'offline');
  });

  for (const provider of [
    'oidc',
    'okta',
    'ping',
    'auth0',
    'cognito',
    'gitlab',
    'onelogin',
    'azure',
  ] as const) {
    test(`${provider}: no access_type, state, nonce and PKCE always`, async () => {
      const providerUrl = ['oidc', 'okta', 'ping', 'auth0', 'cognito'].includes(provider)
        ? new URL(`https://${provider}.example.com`)
        : undefined;
      const { url } = await authUrl(provider, { providerUrl });
      assert.equal(url.searchParams.get('access_type'), null);
      assert.equal(url.searchParams.get('state'), 'st');
      assert.equal(url.searchParams.get('nonce'), 'nc');
      assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
      assert.ok((url.searchParams.get('code_challenge') ?? '').length === 43);
    });
  }

  test('azure: the common endpoint and prompt=select_account', async () => {
    const { url, calls } = await authUrl('azure');
    assert.equal(
      calls[0]?.url,
      'https://login.microsoftonline.com/common/v2.0/.well-known/openid-configuration',
    );
    assert.equal(url.searchParams.get('prompt'), 'select_account');
    assert.equal(url.searchParams.get('scope'), 'openid profile email offline_access');
  });

  test('apple: form_post, name email scopes, spaces as %20', async () => {
    const { fake } = fakeIdp();
    const client = createProviderClient(config('apple'), { fetch: fake });
    assert.equal(client.formPost, true);
    const url = await client.authorizationUrl(REDIRECT, CHECKS);
    assert.equal(url.origin, 'https://appleid.apple.com');
    assert.equal(url.searchParams.get('response_mode'), 'form_post');
    assert.match(url.search, /scope=name%20email/);
    assert.doesNotMatch(url.search, /\+/);
  });

  test('onelogin: groups in the default scopes; the v2 API has no offline_access; idp_scopes win', async () => {
    assert.equal(
      (await authUrl('onelogin')).url.searchParams.get('scope'),
      'openid profile email groups offline_access',
    );
    const v2 = await authUrl('onelogin', { providerUrl: new URL('https://example.onelogin.com/oidc/2') });
    assert.equal(v2.url.searchParams.get('scope'), 'openid profile email groups');
    const own = await authUrl('onelogin', { scopes: ['openid'] });
    assert.equal(own.url.searchParams.get('scope'), 'openid');
  });

  test('the flow parameters cannot be overridden by idp_request_params', async () => {
    const requestParams = {
      state: 'x',
      nonce: 'x',
      code_challenge: 'x',
      redirect_uri: 'https://evil',
      scope: 'x',
    };
    const { url } = await authUrl('oidc', { providerUrl: new URL('https://idp.example.com'), requestParams });
    assert.equal(url.searchParams.get('state'), 'st');
    assert.equal(url.searchParams.get('nonce'), 'nc');
    assert.equal(url.searchParams.get('redirect_uri'), REDIRECT);
    assert.notEqual(url.searchParams.get('code_challenge'), 'x');
    assert.equal(url.searchParams.get('scope'), 'openid profile email offline_access');
  });

  test('providers without a default URL need idp_provider_url', () => {
    for (const provider of ['oidc', 'okta', 'ping', 'auth0', 'cognito'] as const)
      assert.throws(() => createProviderClient(config(provider)), /idp_provider_url/);
  });

  test("auth0: its issuer's trailing slash, and /v2/logout when discovery has no end_session_endpoint", async () => {
    const { fake, calls } = fakeIdp();
    const client = createProviderClient(config('auth0', { providerUrl: new URL('https://t.auth0.com') }), {
      fetch: fake,
    });
    const end = await client.endSessionUrl('idt', 'https://auth.example.com/.portcullis/signed_out');
    assert.equal(calls[0]?.url, 'https://t.auth0.com/.well-known/openid-configuration');
    assert.equal(
      end?.href,
      'https://t.auth0.com/v2/logout?client_id=cid&returnTo=https%3A%2F%2Fauth.example.com%2F.portcullis%2Fsigned_out',
    );
  });

  test('cognito: revocation and logout on the hosted-UI domain', async () => {
    const domain = 'https://pool.auth.eu-west-1.amazoncognito.com';
    const { fake, calls } = fakeIdp(() => ({ authorization_endpoint: `${domain}/oauth2/authorize` }));
    const providerUrl = new URL('https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc');
    const client = createProviderClient(config('cognito', { providerUrl }), { fetch: fake });
    await client.revoke('rt', 'refresh_token');
    const revoke = calls.at(-1);
    assert.equal(revoke?.url, `${domain}/oauth2/revoke`);
    assert.equal(revoke?.method, 'POST');
    assert.match(revoke?.body ?? '', /token=rt/);
    const end = await client.endSessionUrl(undefined, 'https://a.example.com/out');
    assert.equal(end?.href, `${domain}/logout?client_id=cid&logout_uri=https%3A%2F%2Fa.example.com%2Fout`);
  });

  test('no revocation or end-session endpoint: revoke does nothing, endSessionUrl is undefined', async () => {
    const { fake, calls } = fakeIdp();
    const client = createProviderClient(
      config('okta', { providerUrl: new URL('https://okta.example.com') }),
      {
        fetch: fake,
      },
    );
    await client.revoke('rt', 'refresh_token');
    assert.equal(await client.endSessionUrl('idt', 'https://a.example.com/out'), undefined);
    assert.equal(calls.length, 1, 'discovery only');
  });

  test('every call has a deadline: a discovery that never answers is unavailable after timeoutMs', async () => {
    const hang: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) =>
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason)),
      );
    const client = createProviderClient(config('google'), { fetch: hang, timeoutMs: 100 });
    const started = Date.now();
    // AbortSignal.timeout's timer does not keep the process alive; a server's sockets do.
    const alive = setInterval(() => {}, 1_000);
    const err = await client
      .authorizationUrl(REDIRECT, CHECKS)
      .catch((e: unknown) => e)
      .finally(() => clearInterval(alive));
    assert.ok(err instanceof IdpError && err.kind === 'unavailable', String(err));
    assert.ok(Date.now() - started < 1_000);
  });

  test('a discovery answered with a server error is unavailable', async () => {
    const failing: typeof fetch = async () => new Response('oops', { status: 503 });
    const err = await createProviderClient(config('google'), { fetch: failing })
      .authorizationUrl(REDIRECT, CHECKS)
      .catch((e: unknown) => e);
    assert.ok(err instanceof IdpError && err.kind === 'unavailable', String(err));
  });
});

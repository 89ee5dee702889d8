/**
 * The ProviderClient for GitHub (github.com, or GitHub Enterprise Server at `idp_provider_url`):
 * plain OAuth 2.0, no discovery and no ID token, so the user comes from the REST API (`/user`,
 * `/user/emails` for the primary verified address, `/user/orgs` as groups). openid-client still
 * does the protocol: authorization URL (state and PKCE S256; GitHub supports PKCE), code exchange
 * with the state check, refresh (GitHub App user tokens). GitHub has no RFC 7009 revocation
 * endpoint and no RP-initiated logout, so `revoke` does nothing and `endSessionUrl` is undefined.
 */
import {
  authorizationCodeGrant,
  buildAuthorizationUrl,
  calculatePKCECodeChallenge,
  ClientSecretPost,
  Configuration,
  fetchProtectedResource,
  refreshTokenGrant,
} from 'openid-client';
import type { TokenEndpointResponse } from 'openid-client';
import type { FlowChecks, ProviderClient, ProviderConfig, RefreshResult, SignInResult } from '../types.js';
import { BUILTIN_PROVIDERS, providerBaseUrl, providerScopes } from './builtin.js';
import { authorizationParams, callbackAt, configure, signInResult } from './common.js';
import type { ResolvedOptions } from './common.js';
import { statusError, toIdpError } from './errors.js';
import { emailVerifiedBy } from './email-verified.js';

/** The REST API base: api.github.com for github.com, `<url>/api/v3/` for Enterprise Server. */
export function githubApiBase(config: ProviderConfig): URL {
  if (config.providerUrl === undefined) return new URL('https://api.github.com/');
  return new URL('api/v3/', withSlash(config.providerUrl));
}

function withSlash(url: URL): URL {
  return url.pathname.endsWith('/') ? url : new URL(`${url.href}/`);
}

interface GithubUser {
  readonly id?: unknown;
  readonly login?: unknown;
  readonly name?: unknown;
  readonly email?: unknown;
  readonly avatar_url?: unknown;
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/** A GitHub ProviderClient; build it with createProviderClient. */
export class GithubProviderClient implements ProviderClient {
  readonly formPost = false;
  readonly #oauth: Configuration;
  readonly #api: URL;

  constructor(
    readonly config: ProviderConfig,
    private readonly options: ResolvedOptions,
  ) {
    const web = withSlash(providerBaseUrl(config));
    this.#api = githubApiBase(config);
    const server = {
      issuer: web.href,
      authorization_endpoint: new URL('login/oauth/authorize', web).href,
      token_endpoint: new URL('login/oauth/access_token', web).href,
    };
    this.#oauth = configure(
      new Configuration(
        server,
        config.clientId,
        { client_secret: config.clientSecret },
        ClientSecretPost(config.clientSecret),
      ),
      options,
    );
  }

  authorizationUrl(redirectUri: string, checks: FlowChecks): Promise<URL> {
    return calculatePKCECodeChallenge(checks.codeVerifier).then((codeChallenge) =>
      buildAuthorizationUrl(
        this.#oauth,
        authorizationParams(this.config, BUILTIN_PROVIDERS.github.defaultParams, {
          redirectUri,
          scopes: providerScopes(this.config),
          checks,
          codeChallenge,
          nonce: false,
          formPost: false,
        }),
      ),
    );
  }

  async exchangeCode(callback: URL, redirectUri: string, checks: FlowChecks): Promise<SignInResult> {
    try {
      const tokens = await authorizationCodeGrant(this.#oauth, callbackAt(redirectUri, callback), {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
      });
      return await this.#result(tokens);
    } catch (err) {
      throw toIdpError(err, 'GitHub sign-in code exchange');
    }
  }

  async refresh(refreshToken: string): Promise<RefreshResult> {
    try {
      return await this.#result(await refreshTokenGrant(this.#oauth, refreshToken));
    } catch (err) {
      throw toIdpError(err, 'GitHub token refresh');
    }
  }

  async revoke(): Promise<void> {}

  async endSessionUrl(): Promise<URL | undefined> {
    return undefined;
  }

  async #result(tokens: TokenEndpointResponse): Promise<SignInResult> {
    const user = (await this.#get(tokens.access_token, 'user', true)) as GithubUser;
    if (typeof user.id !== 'number' && typeof user.id !== 'string') throw new Error('GitHub /user has no id');
    const emails = await this.#get(tokens.access_token, 'user/emails', false);
    const primary = Array.isArray(emails)
      ? (emails as { email?: unknown; primary?: unknown; verified?: unknown }[]).find(
          (e) => e.primary === true,
        )
      : undefined;
    const orgs = await this.#get(tokens.access_token, 'user/orgs', false);
    const login = text(user.login);
    const claims = {
      sub: String(user.id),
      preferred_username: login,
      name: text(user.name) ?? login,
      email: text(primary?.email) ?? text(user.email),
      email_verified: primary?.verified === true,
      picture: text(user.avatar_url),
      groups: Array.isArray(orgs)
        ? orgs.map((org: { login?: unknown }) => text(org.login)).filter((g) => g !== undefined)
        : [],
    };
    return signInResult(tokens, claims, undefined, this.options.now(), emailVerifiedBy(claims, this.config));
  }

  /** GET one API path as JSON; a failure of an optional one (missing scope) gives undefined. */
  async #get(accessToken: string, path: string, required: boolean): Promise<unknown> {
    const headers = new Headers({
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
    });
    const response = await fetchProtectedResource(
      this.#oauth,
      accessToken,
      new URL(path, this.#api),
      'GET',
      null,
      headers,
    );
    if (!response.ok) {
      await response.body?.cancel();
      if (required || response.status >= 500) throw statusError(response.status, `GitHub ${path}`);
      return undefined;
    }
    return response.json();
  }
}

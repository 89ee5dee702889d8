/**
 * The ProviderClient for GitHub (github.com, or GitHub Enterprise Server at `idp_provider_url`):
 * plain OAuth 2.0, no discovery and no ID token, so the user comes from the REST API (`/user`,
 * `/user/emails` for the primary verified address, `/user/teams` and `/user/orgs` for the groups:
 * see githubGroups). openid-client still
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

/** Items per page of a list call (GitHub's maximum). */
const PAGE_SIZE = 100;
/** Pages read of one list, so a user in thousands of teams cannot stall sign-in; 1,000 items. */
const MAX_PAGES = 10;

/**
 * The `groups` claim of a GitHub user: each team as `<org login>/<team slug>` (spec 5.7: the team
 * slug, not its integer id; with the organization, since a slug is unique only within one, and as
 * GitHub writes team mentions), then each organization login as an extra, documented group (what
 * Portcullis gave before teams). Entries without the fields are skipped; duplicates kept once.
 */
export function githubGroups(teams: readonly unknown[], orgs: readonly unknown[]): string[] {
  const groups = new Set<string>();
  for (const team of teams as { slug?: unknown; organization?: { login?: unknown } | null }[]) {
    const slug = text(team?.slug);
    const org = text(team?.organization?.login);
    if (slug !== undefined && org !== undefined) groups.add(`${org}/${slug}`);
  }
  for (const org of orgs as { login?: unknown }[]) {
    const login = text(org?.login);
    if (login !== undefined) groups.add(login);
  }
  return [...groups];
}

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
    const teams = await this.#list(tokens.access_token, 'user/teams');
    const orgs = await this.#list(tokens.access_token, 'user/orgs');
    const login = text(user.login);
    const claims = {
      sub: String(user.id),
      preferred_username: login,
      name: text(user.name) ?? login,
      email: text(primary?.email) ?? text(user.email),
      email_verified: primary?.verified === true,
      picture: text(user.avatar_url),
      groups: githubGroups(teams, orgs),
    };
    return signInResult(tokens, claims, undefined, this.options.now(), emailVerifiedBy(claims, this.config));
  }

  /**
   * Every item of a paged list (`?per_page=100&page=n`, until a short page or MAX_PAGES). A 4xx on
   * the first page (no `read:org` scope) gives an empty list, as before; a failure on a later page
   * fails the sign-in instead of leaving the user with part of their groups.
   */
  async #list(accessToken: string, path: string): Promise<unknown[]> {
    const items: unknown[] = [];
    for (let page = 1; page <= MAX_PAGES; page++) {
      const body = await this.#get(accessToken, `${path}?per_page=${PAGE_SIZE}&page=${page}`, page > 1);
      if (!Array.isArray(body)) return items;
      items.push(...(body as unknown[]));
      if (body.length < PAGE_SIZE) return items;
    }
    this.options.logger.warn(
      { path, kept: items.length },
      `GitHub ${path} has more than ${MAX_PAGES * PAGE_SIZE} entries; the groups claim keeps the first ones`,
    );
    return items;
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

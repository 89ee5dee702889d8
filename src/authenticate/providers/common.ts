/**
 * What the OIDC and GitHub clients share: their options, the openid-client Configuration settings
 * every client gets (timeout, fetch, http only when allowed), the authorization parameters, and
 * the shape of a SignInResult.
 */
import { allowInsecureRequests, customFetch } from 'openid-client';
import type { Configuration, CustomFetch, TokenEndpointResponse } from 'openid-client';
import { isFlowRequestParam } from '../../shared/flow-params.js';
import { silentLogger } from '../../shared/logger.js';
import type { Logger } from '../../shared/logger.js';
import type { FlowChecks, ProviderConfig, SignInResult } from '../types.js';
import { fetchWithTimeout } from './errors.js';

/** How a ProviderClient makes its calls. */
export interface ProviderClientOptions {
  /** Deadline of every outbound call (discovery, JWKS, token, userinfo, revocation, user API). Default 10 s. */
  readonly timeoutMs?: number;
  /** Allow `http://` IdP URLs; the runtime sets it only for loopback and `*.localhost` IdPs. */
  readonly allowInsecureRequests?: boolean;
  /** Re-discovery interval. Default one hour. */
  readonly rediscoverMs?: number;
  /** For tests: the fetch every call goes through (default: global fetch). */
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
  readonly logger?: Logger;
}

/** ProviderClientOptions with every default filled in. */
export interface ResolvedOptions {
  readonly timeoutMs: number;
  readonly allowInsecureRequests: boolean;
  readonly rediscoverMs: number;
  readonly fetch: typeof fetch;
  readonly now: () => number;
  readonly logger: Logger;
}

/** Fills in the defaults; `fetch` gets the deadline here, so every call made through it has one. */
export function resolveOptions(options: ProviderClientOptions): ResolvedOptions {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return {
    timeoutMs,
    allowInsecureRequests: options.allowInsecureRequests ?? false,
    rediscoverMs: options.rediscoverMs ?? 3_600_000,
    fetch: fetchWithTimeout(options.fetch ?? fetch, timeoutMs),
    now: options.now ?? Date.now,
    logger: options.logger ?? silentLogger,
  };
}

/** openid-client's own timeout is whole seconds; ours (in `fetch`) is exact, this is only a backstop. */
export function libraryTimeoutSeconds(options: ResolvedOptions): number {
  return Math.ceil(options.timeoutMs / 1000) + 1;
}

/** `fetch` as openid-client's customFetch takes it (its options are fetch's RequestInit). */
export function libraryFetch(options: ResolvedOptions): CustomFetch {
  return (url, init) => options.fetch(url, init as RequestInit);
}

/** Applies the options to a Configuration: our fetch (with its deadline), timeout, http when allowed. */
export function configure(config: Configuration, options: ResolvedOptions): Configuration {
  config[customFetch] = libraryFetch(options);
  config.timeout = libraryTimeoutSeconds(options);
  if (options.allowInsecureRequests) allowInsecureRequests(config);
  return config;
}

/**
 * The authorization request: provider defaults, then `idp_request_params` (which override the
 * defaults but never the flow's own parameters: validation refuses those, see shared/flow-params.ts,
 * and they are skipped here too for a ProviderConfig built any other way), then the flow's: redirect_uri, response_type
 * code, scope, state, nonce (OIDC only), the PKCE S256 challenge, and response_mode=form_post
 * when the provider posts the callback.
 */
export function authorizationParams(
  provider: ProviderConfig,
  defaults: Readonly<Record<string, string>>,
  flow: {
    redirectUri: string;
    scopes: readonly string[];
    checks: FlowChecks;
    codeChallenge: string;
    nonce: boolean;
    formPost: boolean;
  },
): Record<string, string> {
  const params: Record<string, string> = { ...defaults };
  for (const [key, value] of Object.entries(provider.requestParams))
    if (!isFlowRequestParam(key)) params[key] = value;
  return {
    ...params,
    redirect_uri: flow.redirectUri,
    response_type: 'code',
    scope: flow.scopes.join(' '),
    state: flow.checks.state,
    ...(flow.nonce ? { nonce: flow.checks.nonce } : {}),
    code_challenge: flow.codeChallenge,
    code_challenge_method: 'S256',
    ...(flow.formPost ? { response_mode: 'form_post' } : {}),
  };
}

/** The URL openid-client checks the callback against: the redirect URI with the callback's parameters. */
export function callbackAt(redirectUri: string, callback: URL): URL {
  const current = new URL(redirectUri);
  current.search = callback.search;
  current.hash = '';
  return current;
}

/**
 * A SignInResult from a token response and the user's merged claims (`oid` wins over `sub`);
 * `emailVerified` as the caller decided it (providers/email-verified.ts).
 */
export function signInResult(
  tokens: TokenEndpointResponse,
  claims: Readonly<Record<string, unknown>>,
  idTokenExp: number | undefined,
  now: number,
  emailVerified: boolean,
): SignInResult {
  const id = typeof claims['oid'] === 'string' ? claims['oid'] : claims['sub'];
  return {
    userId: typeof id === 'string' ? id : '',
    claims,
    emailVerified,
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
    idToken: tokens.id_token,
    accessTokenExpiresAt: typeof tokens.expires_in === 'number' ? now + tokens.expires_in * 1000 : undefined,
    idTokenExpiresAt: idTokenExp === undefined ? undefined : idTokenExp * 1000,
  };
}

/**
 * The authenticate service's own types: the identity-provider client it signs users in with, and
 * the settings it runs on for each accepted build. Authenticate never reads Config (DESIGN.md's
 * layers): settings.ts makes these from the IR's sign-in section and the key ring.
 */
import type { IdpProviderName } from './providers/names.js';
import type { IRSignIn } from '../ir/services.js';

/** One identity-provider client, as configured (secrets revealed; never log this object). */
export interface ProviderConfig {
  /** Stable id (config/identity-provider.ts `identityProviderId`); sessions are bound to it. */
  readonly id: string;
  /** Its configured name, shown on the user page; absent means `default` (the global `idp_*` keys). */
  readonly name?: string;
  readonly provider: IdpProviderName;
  /** Discovery base URL (without `/.well-known/openid-configuration`); undefined: the provider's own. */
  readonly providerUrl: URL | undefined;
  readonly clientId: string;
  readonly clientSecret: string;
  /** `idp_scopes`; undefined means the provider's defaults. */
  readonly scopes: readonly string[] | undefined;
  /** `idp_request_params`, added to the authorization request. */
  readonly requestParams: Readonly<Record<string, string>>;
  /**
   * `idp_trust_unverified_email`: count addresses the provider did not say are verified (see
   * providers/email-verified.ts). Absent means false.
   */
  readonly trustUnverifiedEmail?: boolean;
}

/** What a completed code exchange gives: the user's claims (ID token merged with userinfo) and tokens. */
export interface SignInResult {
  /** The user id: `oid` when present (Azure), else `sub`. */
  readonly userId: string;
  readonly claims: Readonly<Record<string, unknown>>;
  /**
   * Whether `claims.email` counts for policies (providers/email-verified.ts): decided by the claim
   * set that supplied the address, so a userinfo address is never vouched for by the ID token.
   */
  readonly emailVerified: boolean;
  readonly accessToken: string | undefined;
  readonly refreshToken: string | undefined;
  readonly idToken: string | undefined;
  /** Access token expiry (ms), when the IdP gave `expires_in`. */
  readonly accessTokenExpiresAt: number | undefined;
  /** ID token `exp` (ms), when there is an ID token. */
  readonly idTokenExpiresAt: number | undefined;
}

/** What a refresh gives; tokens the IdP did not return again are undefined (keep the old ones). */
export type RefreshResult = SignInResult;

/**
 * Why an IdP call failed, in the two kinds the callers act on: `refused` (the IdP answered and
 * said no: invalid_grant, a bad token, a failed check; a refresh that gets this ends the session)
 * and `unavailable` (network error, timeout, 5xx, bad discovery: try again later; a refresh keeps
 * the session). `message` is safe to show and log (no tokens).
 */
export class IdpError extends Error {
  constructor(
    readonly kind: 'refused' | 'unavailable',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'IdpError';
  }
}

/** The per-flow values the callback must check (kept in the flow cookie, never in the URL). */
export interface FlowChecks {
  readonly state: string;
  readonly nonce: string;
  readonly codeVerifier: string;
}

/**
 * One identity-provider client through openid-client: builds the authorization URL and performs
 * every back-channel call, each with a timeout. Implementations map every library error onto
 * IdpError in one place.
 */
export interface ProviderClient {
  readonly config: ProviderConfig;
  /** True when the IdP posts the callback (`response_mode=form_post`, Apple). */
  readonly formPost: boolean;
  /** The authorization URL for one sign-in (state, nonce, PKCE S256 challenge, scopes, request params). */
  authorizationUrl(redirectUri: string, checks: FlowChecks): Promise<URL>;
  /**
   * Completes the code flow from the callback: checks state, PKCE and the ID token (signature,
   * iss, aud, exp, iat, nonce), then merges userinfo claims. `callback` is the full callback URL
   * (GET) or the URL with the posted form fields as its query (form_post).
   */
  exchangeCode(callback: URL, redirectUri: string, checks: FlowChecks): Promise<SignInResult>;
  /** Refresh-token grant. */
  refresh(refreshToken: string): Promise<RefreshResult>;
  /** RFC 7009 revocation; resolves without doing anything when the IdP has no revocation endpoint. */
  revoke(token: string, hint: 'refresh_token' | 'access_token'): Promise<void>;
  /** The RP-initiated logout URL, or undefined when the IdP has no `end_session_endpoint`. */
  endSessionUrl(idTokenHint: string | undefined, postLogoutRedirectUri: string): Promise<URL | undefined>;
}

/** Cookie attributes for every cookie Portcullis sets (the IR's sign-in section: `cookie_*` options). */
export type CookieSettings = IRSignIn['cookie'];

/** Everything the authenticate service needs from one accepted config. */
export interface AuthenticateSettings {
  /** Public base URL of the authenticate host (`authenticate_service_url`), no trailing slash. */
  readonly authenticateUrl: URL;
  /** Path of the IdP callback on the authenticate host (`authenticate_callback_path`). */
  readonly callbackPath: string;
  readonly cookie: CookieSettings;
  /** 32 bytes: seals the sign-in state and the flow cookie (`cookie_secret`). */
  readonly cookieSecret: Uint8Array;
  /** 32 bytes: seals handoffs and tokens, keys the CSRF tokens (`shared_secret`). */
  readonly sharedSecret: Uint8Array;
  /** Hosts a programmatic login may redirect to; `localhost` also allows loopback addresses. */
  readonly programmaticRedirectDomains: readonly string[];
  /** Where to send the browser after sign-out when the IdP has no end-session endpoint. */
  readonly signoutRedirectUrl: URL | undefined;
  /** Every identity-provider client by id. */
  readonly providers: ReadonlyMap<string, ProviderConfig>;
}

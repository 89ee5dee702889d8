/**
 * The ProviderClient for every OpenID Connect provider (all built-ins but GitHub), on
 * openid-client: discovery (cached, see discovery.ts), the authorization URL with state, nonce and
 * a PKCE S256 challenge (always: we do not rely on the IdP advertising it), the code exchange with
 * every ID-token check including its signature (openid-client's non-repudiation checks; by default
 * it trusts TLS for token-endpoint ID tokens), userinfo merged into the claims with the expected
 * `sub`, refresh, revocation and RP-initiated logout. Every call has a deadline and every failure
 * becomes an IdpError in errors.ts.
 */
import {
  allowInsecureRequests,
  authorizationCodeGrant,
  buildAuthorizationUrl,
  buildEndSessionUrl,
  calculatePKCECodeChallenge,
  ClientSecretBasic,
  ClientSecretPost,
  Configuration,
  customFetch,
  discovery,
  enableNonRepudiationChecks,
  fetchUserInfo,
  refreshTokenGrant,
  ResponseBodyError,
  skipSubjectCheck,
  tokenRevocation,
} from 'openid-client';
import type {
  ClientAuth,
  ServerMetadata,
  TokenEndpointResponse,
  TokenEndpointResponseHelpers,
} from 'openid-client';
import type { FlowChecks, ProviderClient, ProviderConfig, RefreshResult, SignInResult } from '../types.js';
import { BUILTIN_PROVIDERS, providerBaseUrl, providerScopes } from './builtin.js';
import type { BuiltinProvider } from './builtin.js';
import {
  authorizationParams,
  callbackAt,
  configure,
  libraryFetch,
  libraryTimeoutSeconds,
  signInResult,
} from './common.js';
import type { ResolvedOptions } from './common.js';
import { DiscoveryCache } from './discovery.js';
import { emailVerifiedBy } from './email-verified.js';
import { toIdpError } from './errors.js';

/**
 * How this client authenticates at the token endpoint. It starts with client_secret_basic (RFC
 * 8414's default) unless the metadata lists only client_secret_post (Apple), and switches to
 * client_secret_post for good when the IdP answers invalid_client to basic, as Go's oauth2
 * auto-detection does: many IdPs accept only the method a client was registered with.
 */
class ClientAuthStyle {
  #style: 'basic' | 'post' | undefined;

  constructor(private readonly secret: string) {}

  readonly auth: ClientAuth = (as, client, body, headers) => {
    const methods = as.token_endpoint_auth_methods_supported;
    this.#style ??= methods === undefined || methods.includes('client_secret_basic') ? 'basic' : 'post';
    const method = this.#style === 'basic' ? ClientSecretBasic(this.secret) : ClientSecretPost(this.secret);
    method(as, client, body, headers);
  };

  /** Runs a token-endpoint call, once more with client_secret_post if basic was refused as invalid_client. */
  async call<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (err) {
      const invalidClient = err instanceof ResponseBodyError && err.error === 'invalid_client';
      if (!invalidClient || this.#style !== 'basic') throw err;
      this.#style = 'post';
      return request();
    }
  }
}

/** The name fields Apple posts (once, on the first sign-in) in the form_post `user` field. */
function applePostedName(callback: URL): Record<string, unknown> {
  const posted = callback.searchParams.get('user');
  if (posted === null) return {};
  try {
    const user = JSON.parse(posted) as { name?: { firstName?: unknown; lastName?: unknown } };
    const parts = [user.name?.firstName, user.name?.lastName].filter(
      (p): p is string => typeof p === 'string',
    );
    return parts.length === 0 ? {} : { name: parts.join(' ') };
  } catch {
    return {};
  }
}

/** An OIDC ProviderClient; build it with createProviderClient. */
export class OidcProviderClient implements ProviderClient {
  readonly formPost: boolean;
  readonly #builtin: BuiltinProvider;
  readonly #discovery: DiscoveryCache;
  readonly #auth: ClientAuthStyle;

  constructor(
    readonly config: ProviderConfig,
    private readonly options: ResolvedOptions,
  ) {
    this.#builtin = BUILTIN_PROVIDERS[config.provider];
    this.formPost = this.#builtin.formPost;
    this.#auth = new ClientAuthStyle(config.clientSecret);
    const base = providerBaseUrl(config);
    this.#discovery = new DiscoveryCache({
      discover: () => this.#discover(base),
      now: options.now,
      maxAgeMs: options.rediscoverMs,
      logger: options.logger,
    });
  }

  /** Settles when a background re-discovery (if any) has finished. */
  settled(): Promise<void> {
    return this.#discovery.settled();
  }

  async authorizationUrl(redirectUri: string, checks: FlowChecks): Promise<URL> {
    const config = await this.#discovery.get();
    const params = authorizationParams(this.config, this.#builtin.defaultParams, {
      redirectUri,
      scopes: providerScopes(this.config),
      checks,
      codeChallenge: await calculatePKCECodeChallenge(checks.codeVerifier),
      nonce: true,
      formPost: this.formPost,
    });
    const url = buildAuthorizationUrl(config, params);
    // URLSearchParams writes a literal '+' as %2B, so every '+' left is a space.
    if (this.#builtin.percentSpaces) url.search = url.searchParams.toString().replaceAll('+', '%20');
    return url;
  }

  async exchangeCode(callback: URL, redirectUri: string, checks: FlowChecks): Promise<SignInResult> {
    const config = await this.#discovery.get();
    try {
      const tokens = await this.#auth.call(() =>
        authorizationCodeGrant(config, callbackAt(redirectUri, callback), {
          pkceCodeVerifier: checks.codeVerifier,
          expectedState: checks.state,
          expectedNonce: checks.nonce,
          idTokenExpected: true,
        }),
      );
      const result = await this.#result(config, tokens, this.formPost ? applePostedName(callback) : {});
      if (result.userId === '') throw new Error('the ID token has no subject');
      return result;
    } catch (err) {
      throw toIdpError(err, 'sign-in code exchange');
    }
  }

  async refresh(refreshToken: string): Promise<RefreshResult> {
    const config = await this.#discovery.get();
    try {
      const tokens = await this.#auth.call(() => refreshTokenGrant(config, refreshToken));
      return await this.#result(config, tokens, {});
    } catch (err) {
      throw toIdpError(err, 'token refresh');
    }
  }

  async revoke(token: string, hint: 'refresh_token' | 'access_token'): Promise<void> {
    const config = await this.#discovery.get();
    if (config.serverMetadata().revocation_endpoint === undefined) return;
    try {
      await this.#auth.call(() => tokenRevocation(config, token, { token_type_hint: hint }));
    } catch (err) {
      throw toIdpError(err, 'token revocation');
    }
  }

  async endSessionUrl(
    idTokenHint: string | undefined,
    postLogoutRedirectUri: string,
  ): Promise<URL | undefined> {
    const config = await this.#discovery.get();
    const metadata = config.serverMetadata();
    if (metadata.end_session_endpoint !== undefined) {
      return buildEndSessionUrl(config, {
        ...(idTokenHint === undefined ? {} : { id_token_hint: idTokenHint }),
        post_logout_redirect_uri: postLogoutRedirectUri,
      });
    }
    const fallback = this.#builtin.fallbackLogout;
    if (fallback === undefined || metadata.authorization_endpoint === undefined) return undefined;
    const url =
      fallback === 'auth0'
        ? new URL('v2/logout', providerBaseUrl(this.config))
        : new URL('/logout', metadata.authorization_endpoint);
    url.searchParams.set('client_id', this.config.clientId);
    url.searchParams.set(fallback === 'auth0' ? 'returnTo' : 'logout_uri', postLogoutRedirectUri);
    return url;
  }

  async #discover(base: URL): Promise<Configuration> {
    let config: Configuration;
    try {
      const secret = { client_secret: this.config.clientSecret };
      config = await discovery(base, this.config.clientId, secret, this.#auth.auth, {
        ...(this.options.allowInsecureRequests ? { execute: [allowInsecureRequests] } : {}),
        [customFetch]: libraryFetch(this.options),
        timeout: libraryTimeoutSeconds(this.options),
      });
    } catch (err) {
      throw toIdpError(err, `discovery at ${base.href}`, 'discovery');
    }
    config = this.#withFallbacks(config);
    configure(config, this.options);
    enableNonRepudiationChecks(config);
    return config;
  }

  /** Cognito's discovery lists no revocation endpoint; it is `/oauth2/revoke` on its hosted-UI domain. */
  #withFallbacks(config: Configuration): Configuration {
    const metadata = config.serverMetadata();
    if (
      this.#builtin.fallbackRevocation !== 'cognito' ||
      metadata.revocation_endpoint !== undefined ||
      metadata.authorization_endpoint === undefined
    )
      return config;
    // Spread copies the metadata without openid-client's (non-enumerable) helper functions.
    const server: ServerMetadata = Object.assign(
      {},
      { ...metadata },
      {
        revocation_endpoint: new URL('/oauth2/revoke', metadata.authorization_endpoint).href,
      },
    );
    return new Configuration(
      server,
      this.config.clientId,
      { client_secret: this.config.clientSecret },
      this.#auth.auth,
    );
  }

  /** Claims: the ID token's (when there is one), then userinfo's (checked against its `sub`). */
  async #result(
    config: Configuration,
    tokens: TokenEndpointResponse & TokenEndpointResponseHelpers,
    extra: Record<string, unknown>,
  ): Promise<SignInResult> {
    const idClaims = tokens.claims();
    let userinfo: Record<string, unknown> = {};
    if (config.serverMetadata().userinfo_endpoint !== undefined && tokens.access_token !== undefined) {
      // Without an ID token (some refreshes) the access token itself came straight from the IdP.
      userinfo = await fetchUserInfo(config, tokens.access_token, idClaims?.sub ?? skipSubjectCheck);
    }
    // The claim set that supplied the address vouches for it: userinfo's address is never
    // verified by the ID token's email_verified.
    const addressClaims = typeof userinfo.email === 'string' ? userinfo : { ...extra, ...idClaims };
    return signInResult(
      tokens,
      { ...extra, ...idClaims, ...userinfo },
      idClaims?.exp,
      this.options.now(),
      emailVerifiedBy(addressClaims, this.config),
    );
  }
}

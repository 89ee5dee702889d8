/**
 * A signed-in user's session as the databroker keeps it, server-side. Cookies and tokens carry only
 * a handle naming `id`; everything else stays here. Times are Unix milliseconds.
 */
export interface Session {
  readonly id: string;
  readonly userId: string;
  readonly email: string | undefined;
  /**
   * Whether `email` counts for e-mail and domain policies: the provider said it is verified
   * (`email_verified`), or the client trusts unverified addresses (`idp_trust_unverified_email`,
   * part of the client's id, so a session never outlives a change of that setting). False: the
   * address is shown but no policy sees it. Undefined: a session stored before this was recorded;
   * policies on addresses ask it to sign in again, and sign-in does not reuse it.
   */
  readonly emailVerified: boolean | undefined;
  readonly name: string | undefined;
  /** Group ids or names as the identity provider sent them (the `groups` claim). */
  readonly groups: readonly string[];
  /** Every identity-token claim (merged with userinfo), for `claim/<name>` policies and `jwt_claims_headers`. */
  readonly claims: Readonly<Record<string, unknown>>;
  readonly issuedAt: number;
  /** When the session ends whatever happens (`cookie_expire` after sign-in); never extended by refresh. */
  readonly expiresAt: number;
  /**
   * The identity-provider client that made the session (`idpId` of its settings). A route whose
   * client differs treats the session as absent, so a session from one client never opens another's
   * route.
   */
  readonly idpId: string;
  /** The OAuth tokens, sealed (see SealedTokens); undefined for sessions without any (tests, imports). */
  readonly tokens?: SealedTokens;
}

/**
 * The identity provider's tokens for one session, encrypted with a key derived from
 * `shared_secret` (the session id as associated data), so a store dump shows no token. The
 * refresher and sign-out open them, and authorize for routes whose request headers name them
 * (set_request_headers templates), caching what it opened per session. The expiry times are in
 * the clear so the refresher can schedule without decrypting.
 */
export interface SealedTokens {
  /** The sealed OAuthTokens (a compact JWE). */
  readonly sealed: string;
  /** When the access token expires (ms), if the IdP said. */
  readonly accessTokenExpiresAt: number | undefined;
  /** When the ID token expires (ms), if there is one. */
  readonly idTokenExpiresAt: number | undefined;
  /** Whether a refresh token is inside (without one the session cannot be refreshed). */
  readonly refreshable: boolean;
}

/** What SealedTokens hold once opened. */
export interface OAuthTokens {
  readonly accessToken: string | undefined;
  readonly refreshToken: string | undefined;
  readonly idToken: string | undefined;
}

/** Reads and writes sessions. The memory and Redis backends implement it (same conformance tests). */
export interface SessionStore {
  get(id: string): Promise<Session | undefined>;
  /** Synchronous read, when the backend holds sessions in this process (the authorize fast path). */
  getSync?(id: string): Session | undefined;
  put(session: Session): Promise<void>;
  delete(id: string): Promise<void>;
  /** Calls `listener` with the id of every session deleted or replaced, so caches drop it at once. */
  onInvalidate(listener: (id: string) => void): () => void;
}

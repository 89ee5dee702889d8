/**
 * Sign-out, signed-out and the user page (HTML and JSON), on every route host and the
 * authenticate host. Handlers are functions of the request and the HandlerContext (no sockets),
 * tested on a fake clock with a fake ProviderClient.
 */
import { CSRF_PARAM, SIGN_OUT_PATH, SIGNED_OUT_PATH } from '../../contract/endpoints.js';
import type { OAuthTokens, Session } from '../../session/session.js';
import type { HandlerContext, OwnHandler, OwnRequest, OwnResponse } from '../http/types.js';
import { isStoreUnavailable, storeUnavailableResponse } from '../http/store-unavailable.js';
import { openTokens } from '../../session/session-tokens.js';
import type { ProviderClient, ProviderConfig } from '../types.js';
import { providerBaseUrl } from '../providers/builtin.js';
import { DEFAULT_PROVIDER_NAME } from '../../shared/idp-providers.js';
import { bounded } from './bounded.js';
import {
  errorResponse,
  notSignedInResponse,
  signOutConfirmResponse,
  signedOutResponse,
  userPageResponse,
  type SessionProvider,
} from './pages.js';
import { clearSessionCookie } from '../flow/cookies.js';
import { sessionForHandle } from '../session-lookup.js';
import { isSignOutToken, signOutToken } from './sign-out-token.js';

/** How long sign-out waits for each identity-provider call (revocation, end-session URL). */
export const IDP_CALL_BOUND_MS = 2_000;

/**
 * The session a request's handle names, if it verifies, is in the store and has not expired.
 * The route's own client is not checked: these pages show (and end) whatever session the browser
 * holds on this host.
 */
export function currentSession(request: OwnRequest, context: HandlerContext): Promise<Session | undefined> {
  return sessionForHandle(request.sessionHandle, context);
}

/**
 * What a sign-out request carries as its CSRF token: on POST, the form field (else the query);
 * on GET, nothing. A GET never signs out, token or not: a link, an image or a prefetch
 * must not end a session, and a token in a GET URL would travel in logs and Referer headers.
 */
function presentedToken(request: OwnRequest): string | undefined {
  if (request.method !== 'POST') return undefined;
  return request.form?.get(CSRF_PARAM) ?? request.url.searchParams.get(CSRF_PARAM) ?? undefined;
}

/**
 * A handler for SIGN_OUT_PATH (GET and POST), waiting at most `idpCallBoundMs` for each IdP call.
 * GET (with or without a token): a confirmation page whose POST form carries the token (or,
 * without a session, the signed-out page). POST with a missing or wrong token: 403. POST with the
 * valid token: see `endSession`. A session store outage (reading or deleting the session) is a 503 saying
 * sign-out did not complete, with a retry link, and leaves the cookie alone.
 */
export function createSignOutHandler(idpCallBoundMs: number): OwnHandler {
  return async (request, context) => {
    if (request.method !== 'GET' && request.method !== 'POST') {
      const refused = errorResponse(
        405,
        'Method not allowed',
        'Sign out with GET or POST.',
        request.requestId,
      );
      return { ...refused, headers: [...refused.headers, ['allow', 'GET, POST']] };
    }
    try {
      return await signOut(request, context, idpCallBoundMs);
    } catch (error) {
      if (!isStoreUnavailable(error)) throw error;
      // The cookie stays: clearing it alone would leave the session live in the store.
      return storeUnavailableResponse(request, context, error, {
        title: 'Sign-out could not complete',
        message:
          'Portcullis cannot reach its session store right now, so your session was not ended and is still active. Try again in a moment.',
        retryUrl: SIGN_OUT_PATH,
      });
    }
  };
}

/** Sign-out after the method check; a store outage rejects (StoreUnavailableError) before any cookie change. */
async function signOut(
  request: OwnRequest,
  context: HandlerContext,
  idpCallBoundMs: number,
): Promise<OwnResponse> {
  const session = await currentSession(request, context);
  const cookie = clearSessionCookie(context.settings().cookie);
  if (session === undefined) return signedOutResponse([cookie]);
  const secret = context.settings().sharedSecret;
  if (isSignOutToken(secret, session.id, presentedToken(request))) {
    return endSession(session, context, cookie, idpCallBoundMs);
  }
  if (request.method === 'GET') return signOutConfirmResponse(session, signOutToken(secret, session.id));
  return errorResponse(
    403,
    'Sign-out refused',
    "sign-out refused: the request did not carry this session's sign-out token",
    request.requestId,
  );
}

/** SIGN_OUT_PATH with the default bound on IdP calls (IDP_CALL_BOUND_MS). */
export const signOutHandler: OwnHandler = createSignOutHandler(IDP_CALL_BOUND_MS);

/**
 * Ends `session`: deletes it from the store first (its cookie on every host stops working at
 * once; a store outage rejects here, before anything else happens), clears this host's cookie, revokes the refresh token (else the access token) and asks
 * for the end-session URL, each bounded and never blocking sign-out, then redirects to the IdP's
 * end-session endpoint (back to SIGNED_OUT_PATH on the authenticate host), else to
 * `signout_redirect_url`, else shows the signed-out page.
 */
async function endSession(
  session: Session,
  context: HandlerContext,
  cookie: string,
  boundMs: number,
): Promise<OwnResponse> {
  const settings = context.settings();
  const logger = context.logger.child({ userId: session.userId, idpId: session.idpId });
  const tokens = await sessionTokens(session, settings.sharedSecret, logger);
  await context.sessions.delete(session.id);
  logger.info({}, 'signed out');
  context.telemetry.signOut();
  const provider = context.provider(session.idpId);
  let endSessionUrl: URL | undefined;
  if (provider !== undefined) {
    const signedOut = new URL(SIGNED_OUT_PATH, settings.authenticateUrl).href;
    const [, endUrl] = await Promise.all([
      revoke(provider, tokens, boundMs, logger),
      bounded(provider.endSessionUrl(tokens?.idToken, signedOut), boundMs),
    ]);
    if (endUrl.ok) endSessionUrl = endUrl.value;
    else logger.warn({ err: endUrl.reason }, 'end-session URL unavailable; signing out locally only');
  }
  const location = endSessionUrl ?? settings.signoutRedirectUrl;
  if (location === undefined) return signedOutResponse([cookie]);
  return {
    status: 302,
    headers: [
      ['location', location.href],
      ['cache-control', 'no-store'],
    ],
    setCookies: [cookie],
    body: '',
  };
}

/** The session's tokens, or undefined when it has none or they do not open (logged). */
async function sessionTokens(
  session: Session,
  sharedSecret: Uint8Array,
  logger: HandlerContext['logger'],
): Promise<OAuthTokens | undefined> {
  if (session.tokens === undefined) return undefined;
  try {
    return await openTokens(sharedSecret, session.id, session.tokens);
  } catch (err) {
    logger.warn({ err: String(err) }, 'session tokens do not open; not revoking');
    return undefined;
  }
}

/** RFC 7009 revocation of the refresh token, else the access token; bounded, failures logged. */
async function revoke(
  provider: ProviderClient,
  tokens: OAuthTokens | undefined,
  boundMs: number,
  logger: HandlerContext['logger'],
): Promise<void> {
  const target =
    tokens?.refreshToken !== undefined
      ? ([tokens.refreshToken, 'refresh_token'] as const)
      : tokens?.accessToken !== undefined
        ? ([tokens.accessToken, 'access_token'] as const)
        : undefined;
  if (target === undefined) return;
  const outcome = await bounded(provider.revoke(target[0], target[1]), boundMs);
  if (!outcome.ok)
    logger.warn({ err: outcome.reason, hint: target[1] }, 'token revocation failed; signed out anyway');
}

/**
 * SIGNED_OUT_PATH (authenticate host), where the IdP's end-session endpoint returns the browser:
 * clears the authenticate host's session cookie, then 302 to `signout_redirect_url` when set,
 * else the signed-out page.
 */
export const signedOutHandler: OwnHandler = async (_request, context) => {
  const settings = context.settings();
  const cookie = clearSessionCookie(settings.cookie);
  if (settings.signoutRedirectUrl === undefined) return signedOutResponse([cookie]);
  return {
    status: 302,
    headers: [
      ['location', settings.signoutRedirectUrl.href],
      ['cache-control', 'no-store'],
    ],
    setCookies: [cookie],
    body: '',
  };
};

/**
 * USER_PAGE_PATH (HTML): the session's identity, groups, claims, identity provider, times and a
 * sign-out button; without a valid session a 200 "You are not signed in" page linking to `/`
 * (never a redirect, so never a loop).
 */
export const userPageHandler: OwnHandler = async (request, context) => {
  const session = await currentSession(request, context);
  if (session === undefined) return notSignedInResponse();
  const settings = context.settings();
  return userPageResponse(
    session,
    signOutToken(settings.sharedSecret, session.id),
    sessionProvider(settings.providers.get(session.idpId)),
  );
};

/** How the user page names the provider of a session; undefined when the config no longer has it. */
function sessionProvider(config: ProviderConfig | undefined): SessionProvider | undefined {
  if (config === undefined) return undefined;
  const name = config.name ?? DEFAULT_PROVIDER_NAME;
  try {
    return { name, url: providerBaseUrl(config).href };
  } catch {
    // A provider without a URL has no client either; the name still says which one it was.
    return { name, url: undefined };
  }
}

/** The JSON the user endpoint answers for a session. */
export interface UserInfo {
  readonly user_id: string;
  readonly email: string | null;
  readonly name: string | null;
  readonly groups: readonly string[];
  readonly claims: Readonly<Record<string, unknown>>;
  readonly idp_id: string;
  /** The provider's name (`default` for the global `idp_*` one); null when the config no longer has it. */
  readonly idp_name: string | null;
  /** The provider's issuer (discovery base) URL; null when unknown. */
  readonly idp_url: string | null;
  /** ISO 8601, UTC. */
  readonly issued_at: string;
  readonly expires_at: string;
}

/** USER_JSON_PATH: UserInfo as JSON, or 401 `{"error": ...}` without a valid session. */
export const userJsonHandler: OwnHandler = async (request, context) => {
  const session = await currentSession(request, context);
  const json = (status: number, value: unknown): OwnResponse => ({
    status,
    headers: [
      ['content-type', 'application/json'],
      ['cache-control', 'no-store'],
      ['x-content-type-options', 'nosniff'],
    ],
    setCookies: [],
    body: JSON.stringify(value),
  });
  if (session === undefined) return json(401, { error: 'not signed in' });
  const provider = sessionProvider(context.settings().providers.get(session.idpId));
  const info: UserInfo = {
    user_id: session.userId,
    email: session.email ?? null,
    name: session.name ?? null,
    groups: session.groups,
    claims: session.claims,
    idp_id: session.idpId,
    idp_name: provider?.name ?? null,
    idp_url: provider?.url ?? null,
    issued_at: new Date(session.issuedAt).toISOString(),
    expires_at: new Date(session.expiresAt).toISOString(),
  };
  return json(200, info);
};

import { ASSERTION_HEADER, JWKS_PATH, RESERVED_HEADER_PREFIX } from '../contract/authz.js';
import { OWN_PATH_PREFIX, OWN_SESSION_HEADER } from '../contract/endpoints.js';
import { StoreUnavailableError } from '../session/records.js';
import type { Session } from '../session/session.js';
import type { Logger } from '../shared/logger.js';
import type { AuthzState, RouteAuthz } from './authz-state.js';
import { requestClientKind } from './client-kind.js';
import type { AuthorizeRequest, Decision } from './decision.js';
import { denyResponse, signInAnswer, storeUnavailableResponse } from './error-responses.js';
import type { DecisionMinter, RevokedUntil } from './fast-path/decision-minter.js';
import { mintInputFor, withDecisionCookie, type AllowDecision } from './fast-path/mint-on-allow.js';
import type { AssertionSigner } from './identity/assertion-cache.js';
import type { PolicyOutcome } from './policy/compile-policy.js';
import { claimValues } from './policy/claims.js';
import { readCredentials, type RequestCredentials } from './request-credentials.js';
import { assertionTarget, hostnameOf } from './request-host.js';
import { isWellFormed } from './request-shape.js';
import { OncePerKey } from './once-per-key.js';
import { allowWithTokens, type TokenSource } from './token-allow.js';

/** Assertions above this size make every upstream request heavy; they are logged once per session. */
const LARGE_ASSERTION_BYTES = 8 * 1024;
/** How many sessions' large-assertion warnings are remembered before the memory is reset. */
const LARGE_WARNED_SESSIONS = 4096;
/** At most one "session store unavailable" warning per this interval (per authorizer). */
const STORE_WARNING_INTERVAL_MS = 10_000;

/** The authorizer's collaborators, injected so tests and benchmarks control them. */
export interface AuthorizerDeps {
  /** The current state; read once per request, so a reload swaps it atomically. */
  readonly state: () => AuthzState;
  /**
   * The session of an id. May throw or reject with StoreUnavailableError when the store cannot be
   * reached: the request is then answered 503 (never an allow, never a sign-in redirect).
   */
  readonly sessions: { get(id: string): Session | undefined | Promise<Session | undefined> };
  /** The session id a handle names, or undefined when it is forged or malformed. */
  readonly verifyHandle: (handle: string) => string | undefined;
  readonly signer: () => AssertionSigner;
  readonly logger: Logger;
  /** Unix ms clock for rate-limiting the store-outage warning (default Date.now). */
  readonly now?: () => number;
  /**
   * Mints the fast path's decision tokens on allows (docs/fast-path.md) and caches them; the
   * service's own. Absent: no token is ever handed out.
   */
  readonly decisions?: DecisionMinter;
  /**
   * When a session's decision tokens were revoked, by decision session id (`decisionSessionId`):
   * Envoy refuses tokens minted at or before the returned Unix ms, so none is minted until then
   * (it would be refused, and minted again on every request). Absent: nothing is revoked.
   */
  readonly revokedUntil?: RevokedUntil;
  /**
   * Opens sessions' tokens for routes whose request headers name them (the service's
   * SessionTokenCache). Absent: such routes refuse every request (fail closed).
   */
  readonly tokens?: TokenSource;
}

/** The authorizer's own state across requests: warnings it already gave. */
interface Warnings {
  /** Session ids whose large assertion was reported (bounded: LARGE_WARNED_SESSIONS). */
  readonly large: OncePerKey;
  /** When the last store-outage warning was logged, and outages since then not logged. */
  storeWarnedAt: number;
  storeSuppressed: number;
}

/**
 * Decides one request (pomerium-behaviour.md 2.5, in that order): a Check no Envoy would send
 * (request-shape.ts) 400; two different session credentials 400; unknown route 404; a sign-in
 * reason sends browsers to sign in (302) and API clients a 401; deny 403; allow OK; else 403.
 * Allowed requests lose every client-supplied `x-portcullis-*` header, the session cookie and a
 * `Portcullis` Authorization header, and gain the identity assertion and claim headers when the
 * route passes identity headers, and the route's templated request headers filled from the session
 * (token-allow.ts; refused with 401 when a token is missing or expired). On a replayable route of a cookie session with the fast path on,
 * the allow also sets the decision-token cookie (fast-path/mint-on-allow.ts). A session made by another identity-provider client than the
 * route's counts as no session. A public route never looks its session up; a session store that
 * cannot be reached answers 503 (storeUnavailableResponse), never an allow or a sign-in redirect.
 * Checks without a route id are Portcullis's own routes: the JWKS, and `/.portcullis/*` or any
 * path of the authenticate host (see `ownEndpoint`).
 */
export function createAuthorizer(
  deps: AuthorizerDeps,
): (request: AuthorizeRequest) => Decision | Promise<Decision> {
  const warnings: Warnings = {
    large: new OncePerKey(LARGE_WARNED_SESSIONS),
    storeWarnedAt: -Infinity,
    storeSuppressed: 0,
  };
  return (request) => {
    if (!isWellFormed(request)) return malformedRequest(request);
    const state = deps.state();
    if (request.routeId === undefined) return ownRoute(state, request);
    const route = state.routes.get(request.routeId);
    if (route === undefined) return routeNotFound(request);
    const credentials = readCredentials(request.headers, state.cookieName);
    if (credentials.conflicting) return conflictingCredentials(request);
    // A public route never needs a session: the store is not asked (and may be down).
    const sessionId =
      route.public || credentials.handle === undefined ? undefined : deps.verifyHandle(credentials.handle);
    let found: Session | undefined | Promise<Session | undefined>;
    try {
      found = sessionId === undefined ? undefined : deps.sessions.get(sessionId);
    } catch (error) {
      return storeFailure(deps, request, error, warnings);
    }
    // No named closure per request: the tsx/esbuild loader wraps each one in a `__name` call that
    // redefines the function's name, which showed in profiles of the one-connection Check path.
    return found instanceof Promise
      ? found.then(
          (session) => decide(deps, state, route, request, credentials, session, warnings.large),
          (error: unknown) => storeFailure(deps, request, error, warnings),
        )
      : decide(deps, state, route, request, credentials, found, warnings.large);
  };
}

/**
 * A session lookup that threw or rejected: a store outage is the 503 (see
 * storeUnavailableResponse), warned about at most once per STORE_WARNING_INTERVAL_MS with the
 * number of outages not logged since; anything else propagates (the gRPC layer answers INTERNAL,
 * which Envoy turns into its 503, never an allow).
 */
function storeFailure(
  deps: AuthorizerDeps,
  request: AuthorizeRequest,
  error: unknown,
  warnings: Warnings,
): Decision {
  if (!(error instanceof StoreUnavailableError)) throw error;
  const now = (deps.now ?? Date.now)();
  if (now - warnings.storeWarnedAt >= STORE_WARNING_INTERVAL_MS) {
    deps.logger.warn(
      {
        code: error.code,
        err: error.message,
        notLogged: warnings.storeSuppressed,
        requestId: request.requestId,
      },
      'session store unavailable: session-bound requests answered 503',
    );
    warnings.storeWarnedAt = now;
    warnings.storeSuppressed = 0;
  } else warnings.storeSuppressed += 1;
  return storeUnavailableResponse(request.requestId, requestClientKind(request));
}

function decide(
  deps: AuthorizerDeps,
  state: AuthzState,
  route: RouteAuthz,
  request: AuthorizeRequest,
  credentials: RequestCredentials,
  found: Session | undefined,
  warnedLarge: OncePerKey,
): Decision | Promise<Decision> {
  // A session from another client (per-route idp_client_id) never opens this route.
  const otherIdp = found !== undefined && found.idpId !== route.idpId;
  const session = otherIdp ? undefined : found;
  const outcome = route.policy({ request, session });
  // How the client wants errors is read only when the answer is one: an allowed request (the
  // common case) never parses its Accept header.
  if (outcome.unauthenticated)
    return signInAnswer(state.authenticateUrl, request, [
      ...(otherIdp ? ['session-other-idp'] : []),
      ...outcome.allowReasons,
      ...outcome.denyReasons,
    ]);
  if (outcome.deny) {
    return denyResponse(
      403,
      deniedText(request, 'Access to this page is denied by policy.', outcome.denyReasons),
      request.requestId,
      requestClientKind(request),
      outcome.denyReasons,
    );
  }
  if (!outcome.allow) {
    return denyResponse(
      403,
      deniedText(request, 'You are not allowed to access this page.', outcome.allowReasons),
      request.requestId,
      requestClientKind(request),
      outcome.allowReasons,
    );
  }
  // A route sending the session's tokens or claims upstream needs a session even when its
  // policy admits without one; it is never replayed, so nothing is minted for it.
  const tokenHeaders = route.tokenHeaders;
  if (tokenHeaders !== undefined && session === undefined)
    return signInAnswer(state.authenticateUrl, request, [
      'token-headers-need-session',
      ...outcome.allowReasons,
    ]);
  const allowed = allowDecision(deps, state, route, request, credentials, session, outcome, warnedLarge);
  if (tokenHeaders !== undefined && session !== undefined) {
    const now = (deps.now ?? Date.now)();
    const { tokens, logger } = deps;
    return allowWithTokens(allowed, { tokens, route: tokenHeaders, session, request, logger, now });
  }
  const minter = deps.decisions;
  if (minter === undefined) return allowed;
  const input = mintInputFor({
    revokedUntil: deps.revokedUntil,
    signer: deps.signer,
    state,
    route,
    request,
    credentials,
    session,
  });
  return input === undefined ? allowed : withDecisionCookie(allowed, input, minter, deps.logger);
}

/**
 * The allow for a request the policy admitted: credentials and client-sent identity headers
 * stripped, and the assertion and claim headers set when the route passes identity headers.
 */
function allowDecision(
  deps: AuthorizerDeps,
  state: AuthzState,
  route: RouteAuthz,
  request: AuthorizeRequest,
  credentials: RequestCredentials,
  session: Session | undefined,
  outcome: PolicyOutcome,
  warnedLarge: OncePerKey,
): AllowDecision | Promise<AllowDecision> {
  const setHeaders: [string, string][] = [];
  const removeHeaders = strippedHeaders(request, credentials, state);
  if (credentials.cookieWithoutSession !== undefined && credentials.hadSessionCookie) {
    setHeaders.push(['cookie', credentials.cookieWithoutSession]);
    removeHeaders.delete('cookie');
  }
  if (!route.passIdentityHeaders || session === undefined) {
    return {
      kind: 'allow',
      setHeaders,
      removeHeaders: [...removeHeaders],
      reasons: outcome.allowReasons,
      ...(session === undefined ? {} : { user: { id: session.userId, email: session.email } }),
    };
  }
  for (const [header, claim] of state.claimHeaders) {
    const value = claimValues(session.claims, claim).join(',');
    if (value !== '' && !/[\r\n\0]/.test(value)) {
      setHeaders.push([header, value]);
      removeHeaders.delete(header);
    }
  }
  // A fresh cached assertion answers synchronously; only signing a new one waits.
  const signer = deps.signer();
  const target = assertionTarget(request.host, request.scheme, state.issuerFormat);
  const cached = signer.cachedAssertion(session, target);
  const allowed: AllowedIdentity = {
    deps,
    session,
    setHeaders,
    removeHeaders,
    reasons: outcome.allowReasons,
  };
  return cached !== undefined
    ? allowWithAssertion(allowed, cached, warnedLarge)
    : signer.assertionFor(session, target).then((token) => allowWithAssertion(allowed, token, warnedLarge));
}

/**
 * The reason a 403 gives: `page` for HTTP requests; for a CONNECT (a TCP route), the route's
 * target and the policy's reasons, which the tunnel client prints as its one line.
 */
function deniedText(request: AuthorizeRequest, page: string, reasons: readonly string[]): string {
  if (request.method !== 'CONNECT') return page;
  const why = reasons.length === 0 ? '' : ` (${reasons.join(', ')})`;
  return `the policy of the TCP route ${request.host} does not allow this user${why}`;
}

/** What an allowed request with identity headers has so far, before its assertion is added. */
interface AllowedIdentity {
  readonly deps: AuthorizerDeps;
  readonly session: Session;
  readonly setHeaders: [string, string][];
  readonly removeHeaders: Set<string>;
  readonly reasons: Decision['reasons'];
}

/** The allow decision carrying `token` as the identity assertion (warned about once when large). */
function allowWithAssertion(allowed: AllowedIdentity, token: string, warnedLarge: OncePerKey): AllowDecision {
  const { deps, session, setHeaders, removeHeaders } = allowed;
  if (token.length > LARGE_ASSERTION_BYTES && warnedLarge.first(session.id)) {
    deps.logger.warn(
      { bytes: token.length, session: session.id },
      'identity assertion is over 8 KiB; consider jwt_groups_filter',
    );
  }
  setHeaders.push([ASSERTION_HEADER, token]);
  removeHeaders.delete(ASSERTION_HEADER);
  return {
    kind: 'allow',
    setHeaders,
    removeHeaders: [...removeHeaders],
    reasons: allowed.reasons,
    user: { id: session.userId, email: session.email },
  };
}

/** Client-supplied headers that must not reach the upstream, whatever the route says. */
function strippedHeaders(
  request: AuthorizeRequest,
  credentials: RequestCredentials,
  state: AuthzState,
): Set<string> {
  const remove = new Set<string>();
  for (const name of Object.keys(request.headers))
    if (name.startsWith(RESERVED_HEADER_PREFIX)) remove.add(name);
  for (const [header] of state.claimHeaders) if (request.headers[header] !== undefined) remove.add(header);
  if (credentials.hadSessionCookie) remove.add('cookie');
  if (credentials.hadPortcullisAuthorization) remove.add('authorization');
  return remove;
}

/**
 * A Check with no route id: one of the routes compile adds itself. The JWKS is answered here;
 * `/.portcullis/*` on any host, and every path of the authenticate host, are allowed through to
 * Portcullis's HTTP server (without a session: sign-in must be reachable, so no redirect loop).
 * The credential strip removes the session cookie and `Authorization: Portcullis` before the
 * router, so the handle the request carried travels in OWN_SESSION_HEADER, unverified (the HTTP
 * server verifies it like a cookie); nothing else is added. Anything else is 404.
 */
function ownRoute(state: AuthzState, request: AuthorizeRequest): Decision {
  if (request.path === JWKS_PATH) return jwksResponse(state);
  const own =
    request.path.startsWith(OWN_PATH_PREFIX) ||
    (state.authenticateHost !== undefined && hostnameOf(request.host) === state.authenticateHost);
  if (!own) return routeNotFound(request);
  const { handle, conflicting } = readCredentials(request.headers, state.cookieName);
  if (conflicting) return conflictingCredentials(request);
  return handle === undefined || handle === ''
    ? { kind: 'allow', setHeaders: [], removeHeaders: [OWN_SESSION_HEADER], reasons: ['own-endpoint'] }
    : {
        kind: 'allow',
        setHeaders: [[OWN_SESSION_HEADER, handle]],
        removeHeaders: [],
        reasons: ['own-endpoint'],
      };
}

/**
 * The JWKS, answered by ext_authz as a 200 local reply on the tiny per-host JWKS route (see
 * compile/ext-authz.ts), so every route host serves it without a large route per host.
 */
function jwksResponse(state: AuthzState): Decision {
  if (state.jwksJson === undefined)
    return { kind: 'deny', status: 404, headers: [], body: '', reasons: ['no-jwks'] };
  return {
    kind: 'deny',
    status: 200,
    headers: [
      ['content-type', 'application/json'],
      ['cache-control', 'public, max-age=300'],
    ],
    body: state.jwksJson,
    reasons: ['jwks'],
  };
}

/**
 * The 400 for a request with two different session credentials (RequestCredentials.conflicting):
 * refused before any session is looked up, on routes and on Portcullis's own endpoints alike, so
 * a cookie another subdomain set never decides whose session a request runs as.
 */
function conflictingCredentials(request: AuthorizeRequest): Decision {
  return denyResponse(
    400,
    'This request carries two different Portcullis sessions (a cookie set by another site under this domain can cause this). Clear the cookies of this site and sign in again.',
    request.requestId,
    requestClientKind(request),
    ['conflicting-credentials'],
  );
}

/** The 400 for a Check that no Envoy would send (request-shape.ts): no method, host or path. */
function malformedRequest(request: AuthorizeRequest): Decision {
  return denyResponse(400, 'The request is malformed.', request.requestId, requestClientKind(request), [
    'malformed-request',
  ]);
}

/** The 404 for a Check that names no configured route. */
function routeNotFound(request: AuthorizeRequest): Decision {
  return denyResponse(404, 'No route matches this request.', request.requestId, requestClientKind(request), [
    'route-not-found',
  ]);
}

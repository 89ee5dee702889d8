/**
 * The IdP's redirect back to the authenticate host (`authenticate_callback_path`; GET, or a POSTed
 * form for form_post providers). In order: the IdP's `error` parameter, the sealed state, the flow
 * cookie it is bound to (CSRF token), single use of the state, then the code exchange (PKCE, ID
 * token signature, iss, aud, exp, iat and nonce: ProviderClient.exchangeCode). Only when all pass
 * is a session stored and handed off to the route host; every failure is a page with the request
 * id and, where the original URL is known, a way to try again; a session store outage is a 503
 * "try again" page that sets no session cookie. Each sign-in logs one line (user id,
 * IdP id, the time spent at the IdP and the callback's own time; never a token) and is counted
 * (`telemetry.signIn`: success once the session is stored, failure for every error page).
 */
import type { Session } from '../../session/session.js';
import {
  FlowTokenError,
  openFlowCookie,
  openSignInState,
  signInStateOf,
  type FlowCookie,
  type SignInState,
} from '../flow/codecs.js';
import { clearFlowCookie, flowCookieName, sessionCookie } from '../flow/cookies.js';
import { errorResponse } from '../pages/pages.js';
import { sealTokens } from '../../session/session-tokens.js';
import { IdpError, type ProviderClient, type SignInResult } from '../types.js';
import { callbackUrl, clip, failureText, sameSecret } from './flow-text.js';
import { handoffLocation } from './handoff.js';
import { redirectResponse } from './responses.js';
import { isStoreUnavailable, storeUnavailableResponse } from './store-unavailable.js';
import type { HandlerContext, OwnHandler, OwnRequest, OwnResponse } from './types.js';

/** IdP `error` codes that mean "this user may not sign in" (401); others are 400. */
const DENIED_ERRORS = new Set(['access_denied', 'unauthorized_client', 'login_required', 'consent_required']);

/** Why a callback is refused: the page's status, heading and message. */
interface Refusal {
  readonly status: number;
  readonly title: string;
  readonly message: string;
}

const refusal = (status: number, title: string, message: string): Refusal => ({ status, title, message });
const isRefusal = (value: object): value is Refusal => 'status' in value && 'title' in value;

/** The callback handler. */
export const callbackHandler: OwnHandler = async (request, context) => {
  const started = performance.now();
  if (request.method !== 'GET' && request.method !== 'POST') {
    const refused = errorResponse(
      405,
      'Method not allowed',
      'The sign-in callback takes GET or POST.',
      request.requestId,
    );
    return { ...refused, headers: [...refused.headers, ['allow', 'GET, POST']] };
  }
  const params =
    request.method === 'POST' ? (request.form ?? new URLSearchParams()) : request.url.searchParams;
  const state = await stateOf(request, context, params.get('state'));
  if (!('flowId' in state)) {
    context.telemetry.signIn('failure');
    return state;
  }
  const settings = context.settings();
  const provider = context.provider(state.idpId);
  const clearFlow = clearFlowCookie(
    settings.cookie,
    settings.callbackPath,
    state.flowId,
    provider?.formPost ?? false,
  );
  const fail = ({ status, title, message }: Refusal): OwnResponse => {
    context.telemetry.signIn('failure');
    const page = errorResponse(status, title, message, request.requestId, retryUrl(state));
    return { ...page, setCookies: [...page.setCookies, clearFlow] };
  };
  try {
    return await complete(request, context, state, params, { provider, fail, started, clearFlow });
  } catch (error) {
    context.telemetry.signIn('failure');
    if (!isStoreUnavailable(error)) throw error;
    // The state may already be claimed or the code used: "try again" starts a new sign-in.
    const page = storeUnavailableResponse(request, context, error, { retryUrl: retryUrl(state) });
    return { ...page, setCookies: [clearFlow] };
  }
};

/** What `complete` needs from the handler besides the request. */
interface Completion {
  readonly provider: ProviderClient | undefined;
  readonly fail: (refused: Refusal) => OwnResponse;
  /** performance.now() when the callback began. */
  readonly started: number;
  /** The Set-Cookie value that clears this flow's cookie. */
  readonly clearFlow: string;
}

/**
 * The callback after its state opened: the checks, the code exchange, the session stored, and
 * only once the store has it, the session cookie and the handoff. A store outage rejects with
 * StoreUnavailableError (the handler's 503); no cookie names a session that was not stored.
 */
async function complete(
  request: OwnRequest,
  context: HandlerContext,
  state: SignInState,
  params: URLSearchParams,
  { provider, fail, started, clearFlow }: Completion,
): Promise<OwnResponse> {
  const checks = await verifyCallback(request, context, state, params);
  if (isRefusal(checks)) return fail(checks);
  if (provider === undefined)
    return fail(
      refusal(
        503,
        'Sign-in is not available',
        'The identity provider of this sign-in is no longer configured.',
      ),
    );
  const exchangeStarted = performance.now();
  const result = await exchange(request, context, provider, state, params, checks);
  const idpMs = performance.now() - exchangeStarted;
  if (isRefusal(result)) return fail(result);
  const session = await newSession(context, state.idpId, result);
  await context.sessions.put(session);
  const handle = context.handles.issue(session.id);
  const location = await handoffLocation(context, handle, state.target);
  // One line per sign-in; `ownMs` is the callback's own time without the IdP's (`idpMs`).
  const ownMs = performance.now() - started - idpMs;
  context.logger.info(
    {
      requestId: request.requestId,
      userId: session.userId,
      idpId: session.idpId,
      idpMs: Math.round(idpMs * 10) / 10,
      ownMs: Math.round(ownMs * 10) / 10,
    },
    'signed in',
  );
  context.telemetry.signIn('success');
  return redirectResponse(location, [
    sessionCookie(context.settings().cookie, handle, session.expiresAt - session.issuedAt),
    clearFlow,
  ]);
}

/**
 * The checks before the IdP is asked: its `error` parameter, the flow cookie (present, opens,
 * same flow and CSRF token as the state), a code, and single use of the state. Gives the flow
 * cookie's PKCE verifier and nonce, or why the callback is refused.
 */
async function verifyCallback(
  request: OwnRequest,
  context: HandlerContext,
  state: SignInState,
  params: URLSearchParams,
): Promise<FlowCookie | Refusal> {
  const failed = (message: string): Refusal => refusal(400, 'Sign-in failed', message);
  const idpError = params.get('error');
  if (idpError !== null) {
    const description = params.get('error_description');
    const said = clip(description === null || description === '' ? idpError : `${idpError}: ${description}`);
    const status = DENIED_ERRORS.has(idpError) ? 401 : 400;
    return refusal(status, 'The identity provider refused the sign-in', `It answered "${said}".`);
  }
  const settings = context.settings();
  const cookieValue = request.cookies[flowCookieName(settings.cookie, state.flowId)];
  if (cookieValue === undefined || cookieValue === '')
    return failed(
      'This browser holds no cookie for this sign-in: it was started in another browser, or the cookie expired or was blocked.',
    );
  let checks: FlowCookie;
  try {
    checks = await openFlowCookie(settings.cookieSecret, cookieValue, context.now());
  } catch (error) {
    if (!(error instanceof FlowTokenError)) throw error;
    return failed(`The sign-in cookie ${failureText(error.reason)}.`);
  }
  if (checks.flowId !== state.flowId || !sameSecret(checks.csrf, state.csrf))
    return failed('The sign-in cookie does not belong to this sign-in (CSRF check failed).');
  if ((params.get('code') ?? '') === '') return failed('The identity provider sent no authorization code.');
  if (!(await context.replay.claim(`sign-in:${state.flowId}`, state.expiresAt)))
    return failed('This sign-in answer was already used.');
  return checks;
}

/** The code exchange (PKCE, ID token, nonce: the provider's checks); an IdpError becomes a refusal. */
async function exchange(
  request: OwnRequest,
  context: HandlerContext,
  provider: ProviderClient,
  state: SignInState,
  params: URLSearchParams,
  checks: FlowCookie,
): Promise<SignInResult | Refusal> {
  const redirectUri = callbackUrl(context.settings());
  const callback = new URL(redirectUri);
  for (const [name, value] of params) callback.searchParams.append(name, value);
  try {
    return await provider.exchangeCode(callback, redirectUri, {
      state: params.get('state') ?? '',
      nonce: checks.nonce,
      codeVerifier: checks.codeVerifier,
    });
  } catch (error) {
    if (!(error instanceof IdpError)) throw error;
    context.logger.warn(
      { requestId: request.requestId, idpId: state.idpId, kind: error.kind, reason: error.message },
      'sign-in failed at the identity provider',
    );
    return error.kind === 'refused'
      ? refusal(401, 'The identity provider refused the sign-in', clip(error.message))
      : refusal(502, 'The identity provider is unavailable', clip(error.message));
  }
}

/**
 * The opened state, or the 400 page for a missing, bad or expired one (an expired state still
 * names its original URL, which the page offers again).
 */
async function stateOf(
  request: OwnRequest,
  context: HandlerContext,
  raw: string | null,
): Promise<SignInState | OwnResponse> {
  if (raw === null || raw === '')
    return errorResponse(
      400,
      'Sign-in failed',
      "The identity provider's answer carried no sign-in state.",
      request.requestId,
    );
  try {
    return await openSignInState(context.settings().cookieSecret, raw, context.now());
  } catch (error) {
    if (!(error instanceof FlowTokenError)) throw error;
    let retry: string | undefined;
    if (error.reason === 'expired' && error.expiredPayload !== undefined) {
      try {
        retry = retryUrl(signInStateOf(error.expiredPayload));
      } catch {
        retry = undefined;
      }
    }
    const message =
      error.reason === 'expired'
        ? 'The sign-in took longer than 10 minutes. Start again.'
        : `The sign-in state ${failureText(error.reason)}.`;
    return errorResponse(400, 'Sign-in failed', message, request.requestId, retry);
  }
}

/** Where "try again" goes: the original URL, or the route host of a programmatic login. */
function retryUrl(state: SignInState): string {
  return state.target.kind === 'url' ? state.target.url : `${state.target.request.origin}/`;
}

/** A new session from a completed sign-in: claims, groups (strings only), tokens sealed. */
async function newSession(context: HandlerContext, idpId: string, result: SignInResult): Promise<Session> {
  const now = context.now();
  const id = context.randomId();
  const { claims } = result;
  const text = (value: unknown): string | undefined =>
    typeof value === 'string' && value !== '' ? value : undefined;
  const groups = Array.isArray(claims.groups)
    ? claims.groups.filter((group): group is string => typeof group === 'string')
    : [];
  return {
    id,
    userId: result.userId,
    email: text(claims.email),
    emailVerified: result.emailVerified,
    name: text(claims.name),
    groups,
    claims,
    issuedAt: now,
    expiresAt: now + context.settings().cookie.expireMs,
    idpId,
    tokens: await sealTokens(context.settings().sharedSecret, id, result),
  };
}

/**
 * SIGN_IN_PATH on the authenticate host: where authorize sends a browser that must sign in
 * (`portcullis_redirect_uri` = the original URL) and where a programmatic login's URL points
 * (`portcullis_programmatic` = a sealed request). With a live session for the target route's
 * identity provider it goes straight to the handoff (single sign-on across route hosts);
 * otherwise it starts one flow: a sealed `state`, a per-flow cookie with the CSRF token, the
 * PKCE verifier and the nonce, and a redirect to the IdP.
 */
import { randomNonce, randomPKCECodeVerifier, randomState } from 'openid-client';
import { PROGRAMMATIC_PARAM, REDIRECT_URI_PARAM } from '../../contract/endpoints.js';
import type { Session } from '../../session/session.js';
import {
  FlowTokenError,
  SIGN_IN_LIFETIME_MS,
  openProgrammaticRequest,
  sealFlowCookie,
  sealSignInState,
  type SignInTarget,
} from '../flow/codecs.js';
import { flowCookie } from '../flow/cookies.js';
import { errorResponse } from '../pages/pages.js';
import { IdpError } from '../types.js';
import { callbackUrl, failureText } from './flow-text.js';
import { handoffLocation } from './handoff.js';
import { redirectResponse } from './responses.js';
import { sessionForHandle } from '../session-lookup.js';
import type { HandlerContext, OwnHandler, OwnRequest, OwnResponse } from './types.js';

/** Where a sign-in returns and which identity-provider client signs the user in. */
interface Destination {
  readonly target: SignInTarget;
  readonly idpId: string;
}

/** The sign-in handler (GET). */
export const signInHandler: OwnHandler = async (request, context) => {
  if (request.method !== 'GET') {
    const refused = errorResponse(405, 'Method not allowed', 'Sign-in takes GET.', request.requestId);
    return { ...refused, headers: [...refused.headers, ['allow', 'GET']] };
  }
  const destination = await destinationOf(request, context);
  if (!('target' in destination)) return destination;
  const session = await liveSession(request, context, destination.idpId);
  if (session !== undefined) {
    const handle = context.handles.issue(session.id);
    return redirectResponse(await handoffLocation(context, handle, destination.target));
  }
  return startFlow(request, context, destination);
};

/**
 * Where to return: a sealed programmatic request (claimed once), or `portcullis_redirect_uri`,
 * which must reach a configured route (no open redirect) on an origin Portcullis serves it on
 * (scheme, host and port). Else a 400 page saying why.
 */
async function destinationOf(
  request: OwnRequest,
  context: HandlerContext,
): Promise<Destination | OwnResponse> {
  const refuse = (message: string): OwnResponse =>
    errorResponse(400, 'Sign-in refused', message, request.requestId);
  const programmatic = request.url.searchParams.get(PROGRAMMATIC_PARAM);
  if (programmatic !== null) {
    let link;
    try {
      link = await openProgrammaticRequest(context.settings().sharedSecret, programmatic, context.now());
    } catch (error) {
      if (!(error instanceof FlowTokenError)) throw error;
      return refuse(
        `This programmatic sign-in link ${failureText(error.reason)}. Ask your client for a new one.`,
      );
    }
    // Single use, as handoffs are: a link seen twice (a shared screen, a log, a history) signs no one in.
    if (!(await context.replay.claim(`programmatic:${link.jti}`, link.expiresAt)))
      return refuse('This programmatic sign-in link was already used. Ask your client for a new one.');
    const { origin, redirectUri, idpId } = link;
    return { target: { kind: 'programmatic', request: { origin, redirectUri, idpId } }, idpId };
  }
  const raw = request.url.searchParams.get(REDIRECT_URI_PARAM);
  if (raw === null || raw === '')
    return refuse(`The sign-in request did not say where to return (${REDIRECT_URI_PARAM} is missing).`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse(`${REDIRECT_URI_PARAM} is not an absolute URL.`);
  }
  const located = context.routes().locate(url);
  if (located === undefined)
    return refuse(
      `${url.origin}${url.pathname} is not served by any configured route, so Portcullis will not send you there after sign-in.`,
    );
  // Envoy matched the host name only: the scheme and port must be ones Portcullis serves, or the
  // handoff (a bearer credential) would go to whoever listens there, in clear text over http.
  if (!located.origins.includes(url.origin))
    return refuse(
      `${url.origin} is not where Portcullis serves ${url.hostname} (${located.origins.join(' or ')}), so Portcullis will not send your session there after sign-in.`,
    );
  return { target: { kind: 'url', url: url.href }, idpId: located.idpId };
}

/**
 * The request's session when its handle verifies, the store has it, it is live and made by `idpId`.
 * A session stored before e-mail verification was recorded (emailVerified undefined) is not
 * reused: address policies send it here to be replaced by a fresh sign-in, so reusing it would loop.
 */
async function liveSession(
  request: OwnRequest,
  context: HandlerContext,
  idpId: string,
): Promise<Session | undefined> {
  const session = await sessionForHandle(request.sessionHandle, context);
  return session?.idpId === idpId && session.emailVerified !== undefined ? session : undefined;
}

/** Starts one sign-in at the IdP: state, flow cookie, PKCE S256 and nonce. */
async function startFlow(
  request: OwnRequest,
  context: HandlerContext,
  destination: Destination,
): Promise<OwnResponse> {
  const retry = request.url.href;
  const provider = context.provider(destination.idpId);
  if (provider === undefined)
    return errorResponse(
      503,
      'Sign-in is not available',
      'No identity provider is configured for this site right now (the configuration may be reloading).',
      request.requestId,
      retry,
    );
  const settings = context.settings();
  const now = context.now();
  const flowId = context.randomId();
  const csrf = randomState();
  const nonce = randomNonce();
  const codeVerifier = randomPKCECodeVerifier();
  const state = await sealSignInState(
    settings.cookieSecret,
    { flowId, csrf, target: destination.target, idpId: destination.idpId },
    now,
  );
  let authorization: URL;
  try {
    authorization = await provider.authorizationUrl(callbackUrl(settings), { state, nonce, codeVerifier });
  } catch (error) {
    if (!(error instanceof IdpError)) throw error;
    context.logger.warn(
      { requestId: request.requestId, idpId: destination.idpId, reason: error.message },
      'identity provider unavailable for sign-in',
    );
    return errorResponse(
      502,
      'The identity provider is unavailable',
      `Portcullis could not reach the identity provider: ${error.message}`,
      request.requestId,
      retry,
    );
  }
  const cookieValue = await sealFlowCookie(settings.cookieSecret, { flowId, csrf, codeVerifier, nonce }, now);
  return redirectResponse(authorization.href, [
    flowCookie(
      settings.cookie,
      settings.callbackPath,
      flowId,
      cookieValue,
      SIGN_IN_LIFETIME_MS,
      provider.formPost,
    ),
  ]);
}

/**
 * The handoff: how a session made on the authenticate host reaches a route host, which has its
 * own cookie jar. The authenticate host redirects to `<route origin>/.portcullis/callback` with a
 * sealed, single-use, 60-second handoff carrying the session handle; the route host sets its own
 * session cookie and sends the browser on to the original URL (pomerium-behaviour.md 5.3 steps
 * 6-7, without the signed-URL window that fails slow logins).
 */
import type { Session } from '../../session/session.js';
import { HANDOFF_PARAM, HANDOFF_PATH, JWT_PARAM } from '../../contract/endpoints.js';
import { sealHandoff, openHandoff, FlowTokenError, type SignInTarget } from '../flow/codecs.js';
import { sessionCookie } from '../flow/cookies.js';
import { errorResponse } from '../pages/pages.js';
import { failureText } from './flow-text.js';
import { redirectResponse } from './responses.js';
import { isStoreUnavailable, storeUnavailableResponse } from './store-unavailable.js';
import { sessionForHandle } from '../session-lookup.js';
import type { HandlerContext, OwnHandler, OwnResponse } from './types.js';

/**
 * Where the authenticate host sends the browser once it holds session `handle`: the handoff URL on
 * the target's route host, carrying the original URL (or, for a programmatic login, the route
 * host's origin and the client's redirect URI).
 */
export async function handoffLocation(
  context: HandlerContext,
  handle: string,
  target: SignInTarget,
): Promise<string> {
  const origin = target.kind === 'url' ? new URL(target.url).origin : target.request.origin;
  const sealed = await sealHandoff(
    context.settings().sharedSecret,
    {
      handle,
      url: target.kind === 'url' ? target.url : `${origin}/`,
      programmaticRedirect: target.kind === 'url' ? undefined : target.request.redirectUri,
      jti: context.randomId(),
    },
    context.now(),
  );
  const location = new URL(HANDOFF_PATH, origin);
  location.searchParams.set(HANDOFF_PARAM, sealed);
  return location.href;
}

/**
 * HANDOFF_PATH on a route host (GET): opens and claims the handoff (once), checks it was made for
 * an origin the configuration serves a route on (scheme, host and port: never the request's Host
 * port or scheme) under this host name, and that its session is still live, then sets this host's session
 * cookie and redirects to the original URL; for a programmatic login, redirects to the client's
 * redirect URI with `portcullis_jwt=<handle>` instead (no cookie). Any failure is a 400 page with
 * a link to start again (a session store outage: 503), and sets nothing.
 */
export const handoffHandler: OwnHandler = async (request, context) => {
  const startAgain = `${request.url.origin}/`;
  if (request.method !== 'GET') {
    const refused = errorResponse(
      405,
      'Method not allowed',
      'The sign-in handoff takes GET.',
      request.requestId,
    );
    return { ...refused, headers: [...refused.headers, ['allow', 'GET']] };
  }
  const refuse = (message: string, retry = startAgain): OwnResponse =>
    errorResponse(400, 'Sign-in could not be completed', message, request.requestId, retry);
  const sealed = request.url.searchParams.get(HANDOFF_PARAM);
  if (sealed === null || sealed === '') return refuse('The sign-in handoff is missing from this link.');
  const now = context.now();
  const settings = context.settings();
  let handoff;
  try {
    handoff = await openHandoff(settings.sharedSecret, sealed, now);
  } catch (error) {
    if (!(error instanceof FlowTokenError)) throw error;
    return refuse(`The sign-in handoff ${failureText(error.reason)}. Start again from the page you wanted.`);
  }
  // The handoff names the origin it was made for; that origin must be one the configuration
  // serves. The client's Host header says nothing (whoever holds a handoff chooses it): only its
  // host name, which Envoy routed on, must be the handoff's, so the cookie is set for that site.
  const made = new URL(handoff.url);
  if (!context.routes().serves(made) || made.hostname !== request.url.hostname)
    return refuse('This sign-in handoff was made for another site.');
  let session: Session | undefined;
  try {
    if (!(await context.replay.claim(`handoff:${handoff.jti}`, handoff.expiresAt)))
      return refuse(
        'This sign-in handoff was already used. Start again from the page you wanted.',
        handoff.url,
      );
    session = await sessionForHandle(handoff.handle, context);
  } catch (error) {
    if (!isStoreUnavailable(error)) throw error;
    return storeUnavailableResponse(request, context, error, { retryUrl: handoff.url });
  }
  if (session === undefined) return refuse('The session ended before the sign-in completed.', handoff.url);
  if (handoff.programmaticRedirect !== undefined) {
    const redirect = new URL(handoff.programmaticRedirect);
    redirect.searchParams.set(JWT_PARAM, handoff.handle);
    return redirectResponse(redirect.href);
  }
  return redirectResponse(handoff.url, [
    sessionCookie(settings.cookie, handoff.handle, session.expiresAt - now),
  ]);
};

/**
 * Which handler answers a request to Portcullis's own HTTP server, by host and path
 * (pomerium-behaviour.md 5.1). The authenticate host answers sign-in, the IdP callback, sign-out
 * and the user page; a route host (a host that locates a configured route) answers the handoff,
 * programmatic login, sign-out and the user page. Everything else is a 404 page. Methods are each
 * handler's own business.
 */
import {
  HANDOFF_PATH,
  PROGRAMMATIC_LOGIN_PATH,
  SIGN_IN_PATH,
  SIGN_OUT_PATH,
  SIGNED_OUT_PATH,
  USER_JSON_PATH,
  USER_PAGE_PATH,
} from '../../contract/endpoints.js';
import { signOutHandler, signedOutHandler, userJsonHandler, userPageHandler } from '../pages/handlers.js';
import { errorResponse } from '../pages/pages.js';
import { callbackHandler } from './callback.js';
import { tracedHandler } from './traced.js';
import { handoffHandler } from './handoff.js';
import { programmaticLoginHandler } from './programmatic-login.js';
import { redirectResponse, textResponse } from './responses.js';
import { signInHandler } from './sign-in.js';
import { isStoreUnavailable, storeUnavailableResponse } from './store-unavailable.js';
import type { HandlerContext, OwnHandler, OwnRequest, OwnResponse } from './types.js';

/** `/` of the authenticate host: the user page. */
const rootHandler: OwnHandler = async () => redirectResponse(USER_PAGE_PATH);

/** `/robots.txt` of the authenticate host: nothing to index. */
const robotsHandler: OwnHandler = async () => textResponse(200, 'User-agent: *\nDisallow: /');

/** The IdP callback, where a sign-in ends: traced as `sign-in callback`. */
const tracedCallback = tracedHandler('sign-in callback', callbackHandler);

const AUTHENTICATE_HOST: ReadonlyMap<string, OwnHandler> = new Map([
  ['/', rootHandler],
  ['/robots.txt', robotsHandler],
  [SIGN_IN_PATH, signInHandler],
  [SIGN_OUT_PATH, signOutHandler],
  [SIGNED_OUT_PATH, signedOutHandler],
  [USER_PAGE_PATH, userPageHandler],
  [USER_JSON_PATH, userJsonHandler],
]);

const ROUTE_HOST: ReadonlyMap<string, OwnHandler> = new Map([
  [HANDOFF_PATH, handoffHandler],
  [PROGRAMMATIC_LOGIN_PATH, programmaticLoginHandler],
  [SIGN_OUT_PATH, signOutHandler],
  [USER_PAGE_PATH, userPageHandler],
  [USER_JSON_PATH, userJsonHandler],
]);

/**
 * The handler for `request`, or undefined (404). The IdP callback path is read from the current
 * settings (`authenticate_callback_path`), so it is checked before the fixed paths.
 */
export function handlerFor(request: OwnRequest, context: HandlerContext): OwnHandler | undefined {
  const path = request.url.pathname;
  if (request.onAuthenticateHost) {
    if (path === context.settings().callbackPath) return tracedCallback;
    return AUTHENTICATE_HOST.get(path);
  }
  const handler = ROUTE_HOST.get(path);
  if (handler === undefined || context.routes().locate(request.url) === undefined) return undefined;
  return handler;
}

/**
 * Answers `request`: its handler's response, or a 404 page. A session store outage a handler did
 * not answer itself becomes the 503 "try again" answer (store-unavailable.ts; JSON on the JSON
 * user endpoint), never a 500 and never a cookie change. Other handler errors propagate (server.ts).
 */
export async function dispatch(request: OwnRequest, context: HandlerContext): Promise<OwnResponse> {
  const handler = handlerFor(request, context);
  if (handler === undefined)
    return errorResponse(404, 'Not found', 'There is nothing at this address.', request.requestId);
  try {
    return await handler(request, context);
  } catch (error) {
    if (!isStoreUnavailable(error)) throw error;
    return storeUnavailableResponse(request, context, error, {
      json: request.url.pathname === USER_JSON_PATH,
    });
  }
}

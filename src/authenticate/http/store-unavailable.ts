/**
 * The one answer of every own endpoint whose session store (Redis, a remote databroker) cannot be
 * reached: 503 with a "try again" link, never a cookie change. A store outage is not "no
 * session": the user's session is still valid when the store returns, so nothing here clears or
 * sets a session cookie (security-threats.md 4.2).
 */
import { StoreUnavailableError } from '../../session/records.js';
import { errorResponse } from '../pages/pages.js';
import type { HandlerContext, OwnRequest, OwnResponse } from './types.js';

/** What the page says; every field has a default (sign-in wording, retry = this URL on GET). */
export interface UnavailableText {
  readonly title?: string;
  readonly message?: string;
  /** The "Try again" link; default: the request's own URL for a GET, none otherwise. */
  readonly retryUrl?: string;
  /** Answer `{"error", "reason", "request_id"}` JSON instead of the page (JSON endpoints). */
  readonly json?: boolean;
}

const DEFAULT_TITLE = 'Sign-in is temporarily unavailable';
const DEFAULT_MESSAGE =
  'Portcullis cannot reach its session store right now. Your session, if you have one, is kept. Try again in a moment.';

/** Whether `error` is a store outage (the only error these helpers turn into a 503). */
export function isStoreUnavailable(error: unknown): error is StoreUnavailableError {
  return error instanceof StoreUnavailableError;
}

/**
 * The 503 for a store outage met while answering `request`, logged once at warn with the error
 * code and message (no stack, no secret). No Set-Cookie: the cookie stays, and no cookie names a
 * session that was not stored. `Retry-After: 5` tells clients it is temporary.
 */
export function storeUnavailableResponse(
  request: OwnRequest,
  context: Pick<HandlerContext, 'logger'>,
  error: StoreUnavailableError,
  text: UnavailableText = {},
): OwnResponse {
  context.logger.warn(
    { requestId: request.requestId, path: request.url.pathname, code: error.code, err: error.message },
    'session store unavailable; answered 503',
  );
  const title = text.title ?? DEFAULT_TITLE;
  const message = text.message ?? DEFAULT_MESSAGE;
  const retry = text.retryUrl ?? (request.method === 'GET' ? request.url.href : undefined);
  if (text.json === true)
    return {
      status: 503,
      headers: [
        ['content-type', 'application/json'],
        ['cache-control', 'no-store'],
        ['retry-after', '5'],
      ],
      setCookies: [],
      body: JSON.stringify({ error: title, reason: message, request_id: request.requestId }),
    };
  const page = errorResponse(503, title, message, request.requestId, retry);
  return { ...page, headers: [...page.headers, ['retry-after', '5']] };
}

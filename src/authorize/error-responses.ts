import { STATUS_CODES } from 'node:http';
import { requestClientKind, type ClientKind } from './client-kind.js';
import type { AuthorizeRequest, Decision } from './decision.js';
import { SIGN_OUT_PATH, USER_PAGE_PATH, signInLocation } from '../contract/endpoints.js';
import { PAGE_HEADERS, html, renderPage } from '../shared/html-page.js';

/** gRPC status for an HTTP status, as gRPC's HTTP mapping does (401 -> UNAUTHENTICATED, ...). */
function grpcStatus(status: number): number {
  if (status === 400) return 13;
  if (status === 401) return 16;
  if (status === 403) return 7;
  if (status === 404) return 12;
  if (status === 429 || status === 502 || status === 503 || status === 504) return 14;
  return 2;
}

/**
 * The deny decision a client sees: an HTML page in the shared shell (shared/html-page.ts: status,
 * reason, request id, links to the user page and sign-out) for browsers, `{"error", "request_id"}` JSON for API clients, and for
 * gRPC clients an empty body with `grpc-status` / `grpc-message`. Nothing from the request is
 * echoed into the page except the request id, escaped.
 */
export function denyResponse(
  status: number,
  reason: string,
  requestId: string,
  kind: ClientKind,
  reasons: readonly string[],
): Decision {
  const statusText = STATUS_CODES[status] ?? 'Error';
  if (kind === 'grpc') {
    return {
      kind: 'deny',
      status,
      headers: [
        ['content-type', 'application/grpc'],
        ['grpc-status', String(grpcStatus(status))],
        ['grpc-message', encodeURIComponent(reason)],
      ],
      body: '',
      reasons,
    };
  }
  if (kind === 'json') {
    return {
      kind: 'deny',
      status,
      headers: [
        ['content-type', 'application/json'],
        ['cache-control', 'no-store'],
      ],
      body: JSON.stringify({ error: statusText, reason, request_id: requestId }),
      reasons,
    };
  }
  return {
    kind: 'deny',
    status,
    headers: PAGE_HEADERS,
    body: errorPage(status, statusText, reason, requestId),
    reasons,
  };
}

/**
 * The answer when the session store cannot be reached (Redis or the databroker down): 503 for
 * every client kind (page, JSON or gRPC UNAVAILABLE) with `Retry-After: 5`, reason
 * `session-store-unavailable`. Never a sign-in redirect: signing in needs the store too, so a
 * redirect would only loop; never an allow.
 */
export function storeUnavailableResponse(requestId: string, kind: ClientKind): Decision {
  const decision = denyResponse(
    503,
    'Sessions are temporarily unavailable; try again in a moment.',
    requestId,
    kind,
    ['session-store-unavailable'],
  );
  return decision.kind === 'deny'
    ? { ...decision, headers: [...decision.headers, ['retry-after', '5']] }
    : decision;
}

/** A 302 to the sign-in page (browsers); API clients get 401 from the caller instead. */
export function signInRedirect(location: string, reasons: readonly string[]): Decision {
  return {
    kind: 'deny',
    status: 302,
    headers: [
      ['location', location],
      ['cache-control', 'no-store'],
    ],
    body: '',
    reasons,
  };
}

function errorPage(status: number, statusText: string, reason: string, requestId: string): string {
  return renderPage({
    title: `${status} ${statusText}`,
    content: html`<p>${reason}</p>
      <p class="muted">Request id: <code>${requestId}</code></p>
      <p><a href="${USER_PAGE_PATH}">Your session</a> · <a href="${SIGN_OUT_PATH}">Sign out</a></p>`,
  });
}

/**
 * The answer to a request that needs a signed-in user and has none: browsers go to sign in (302),
 * API clients get 401; 500 when no sign-in is configured.
 */
export function signInAnswer(
  authenticateUrl: string | undefined,
  request: AuthorizeRequest,
  reasons: readonly string[],
): Decision {
  const kind = requestClientKind(request);
  if (authenticateUrl === undefined)
    return denyResponse(500, 'Sign-in is not configured.', request.requestId, kind, [
      'sign-in-not-configured',
      ...reasons,
    ]);
  if (kind === 'browser')
    return signInRedirect(signInLocation(authenticateUrl, originalUrl(request)), reasons);
  return denyResponse(401, 'Sign in to access this page.', request.requestId, kind, reasons);
}

/**
 * The URL the browser asked for, to come back to after sign-in: its scheme, the host with the port
 * as sent (Envoy keeps it), path and query.
 */
function originalUrl(request: AuthorizeRequest): string {
  const query = request.query === '' ? '' : `?${request.query}`;
  return `${request.scheme || 'https'}://${request.host}${request.path}${query}`;
}

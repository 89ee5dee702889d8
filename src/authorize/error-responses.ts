import { STATUS_CODES } from 'node:http';
import type { Decision } from './decision.js';
import type { ClientKind } from './client-kind.js';
import { INTERNAL_PATH_PREFIX } from '../contract/authz.js';

/** gRPC status for an HTTP status, as gRPC's HTTP mapping does (401 -> UNAUTHENTICATED, ...). */
function grpcStatus(status: number): number {
  if (status === 400) return 13;
  if (status === 401) return 16;
  if (status === 403) return 7;
  if (status === 404) return 12;
  if (status === 429 || status === 502 || status === 503 || status === 504) return 14;
  return 2;
}

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] as string);

/**
 * The deny decision a client sees: a branded HTML page (status, reason, request id, links to the
 * user page and sign-out) for browsers, `{"error", "request_id"}` JSON for API clients, and for
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
    headers: [
      ['content-type', 'text/html; charset=utf-8'],
      ['cache-control', 'no-store'],
    ],
    body: errorPage(status, statusText, reason, requestId),
    reasons,
  };
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
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${status} ${escapeHtml(statusText)} · Portcullis</title>
<style>body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1d2433;display:flex;min-height:100vh;margin:0;align-items:center;justify-content:center}
main{background:#fff;border-radius:12px;box-shadow:0 2px 12px #0002;padding:2.5rem 3rem;max-width:32rem}
h1{margin:0 0 .5rem;font-size:1.6rem}.brand{color:#6b4fbb;font-weight:600;letter-spacing:.05em}code{background:#eef;padding:.1rem .3rem;border-radius:4px}
a{color:#6b4fbb}</style></head>
<body><main><div class="brand">PORTCULLIS</div><h1>${status} ${escapeHtml(statusText)}</h1>
<p>${escapeHtml(reason)}</p>
<p>Request id: <code>${escapeHtml(requestId)}</code></p>
<p><a href="${INTERNAL_PATH_PREFIX}">Your account</a> · <a href="${INTERNAL_PATH_PREFIX}sign_out">Sign out</a></p>
</main></body></html>`;
}

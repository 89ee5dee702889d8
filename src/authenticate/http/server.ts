/**
 * Portcullis's own HTTP server (node:http on loopback, reached through Envoy's `portcullis-http`
 * cluster): decodes each request once into an OwnRequest, dispatches it (router.ts) and writes the
 * OwnResponse with security headers. No exception leaves it: a handler that throws is logged
 * (path without query, no secrets) and answered with a 500 page carrying the request id.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:https';
import { MIMEType } from 'node:util';
import { parseCookie } from 'cookie';
import { OWN_SESSION_HEADER } from '../../contract/endpoints.js';
import { errorResponse } from '../pages/pages.js';
import { dispatch } from './router.js';
import type { HandlerContext, OwnRequest, OwnResponse } from './types.js';

/** Options of the server; every field has a default. */
export interface OwnServerOptions {
  /** Largest request body read (a POSTed form); larger is 413. Default 16 KiB. */
  readonly maxBodyBytes?: number;
  /** node:http's bound on receiving a whole request. Default 30 s. */
  readonly requestTimeoutMs?: number;
  /** Serve HTTPS with this certificate (the one `tls_derive` derives); unset: plain HTTP. */
  readonly tls?: { readonly certPem: string; readonly keyPem: string };
}

const DEFAULT_MAX_BODY_BYTES = 16 * 1024;
const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Headers on every answer unless the handler set its own of the same name. */
const SECURITY_HEADERS: readonly (readonly [string, string])[] = [
  ['cache-control', 'no-store'],
  ['x-content-type-options', 'nosniff'],
  ['x-frame-options', 'DENY'],
  ['referrer-policy', 'no-referrer'],
  ['content-security-policy', "default-src 'none'; base-uri 'none'; frame-ancestors 'none'"],
];

/**
 * A node:http Server (node:https with `tls`; not yet listening) answering Portcullis's own endpoints with `context`'s
 * handlers. The caller listens (IRInternal.http) and closes it.
 */
export function createOwnServer(context: HandlerContext, options: OwnServerOptions = {}): Server | TlsServer {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    void serve(req, res, context, maxBodyBytes);
  };
  const requestTimeout = options.requestTimeoutMs ?? 30_000;
  return options.tls === undefined
    ? createServer({ requestTimeout }, handler)
    : createTlsServer({ requestTimeout, cert: options.tls.certPem, key: options.tls.keyPem }, handler);
}

/** One request, start to end; never rejects. */
async function serve(
  req: IncomingMessage,
  res: ServerResponse,
  context: HandlerContext,
  maxBodyBytes: number,
): Promise<void> {
  const header = req.headers['x-request-id'];
  const requestId = typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID();
  let response: OwnResponse;
  try {
    const decoded = await decodeRequest(req, context, requestId, maxBodyBytes);
    response = 'status' in decoded ? decoded : await dispatch(decoded, context);
  } catch (error) {
    context.logger.error(
      {
        requestId,
        method: req.method,
        path: (req.url ?? '').split('?')[0],
        err: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      },
      'own endpoint failed',
    );
    response = internalError(requestId);
  }
  try {
    write(res, response);
  } catch (error) {
    context.logger.error({ requestId, err: String(error) }, 'writing an own-endpoint answer failed');
    res.destroy();
  }
}

/** The 500 page, or plain text should the page itself fail. */
function internalError(requestId: string): OwnResponse {
  try {
    return errorResponse(500, 'Something went wrong', 'Portcullis could not answer this request.', requestId);
  } catch {
    return {
      status: 500,
      headers: [['content-type', 'text/plain; charset=utf-8']],
      setCookies: [],
      body: `internal error (request id ${requestId})\n`,
    };
  }
}

/** A request decoded into an OwnRequest, or the error answer (400, 413) it gets instead. */
async function decodeRequest(
  req: IncomingMessage,
  context: HandlerContext,
  requestId: string,
  maxBodyBytes: number,
): Promise<OwnRequest | OwnResponse> {
  const bad = (message: string): OwnResponse => errorResponse(400, 'Bad request', message, requestId);
  const url = requestUrl(req);
  if (url === undefined) return bad('The request has no valid Host, scheme or path.');
  const body = await readBody(req, maxBodyBytes);
  if (body === 'too-large') {
    const page = errorResponse(
      413,
      'Request too large',
      `Bodies are limited to ${maxBodyBytes} bytes.`,
      requestId,
    );
    return { ...page, headers: [...page.headers, ['connection', 'close']] };
  }
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(req.headers))
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  const cookies = parseCookie(headers.cookie ?? '');
  const settings = context.settings();
  const fromHeader = headers[OWN_SESSION_HEADER];
  const fromCookie = cookies[settings.cookie.name];
  return {
    method: req.method ?? 'GET',
    url,
    headers,
    cookies,
    form:
      req.method === 'POST' && isForm(headers['content-type'])
        ? new URLSearchParams(body.toString('utf8'))
        : undefined,
    sessionHandle:
      fromHeader !== undefined && fromHeader !== '' ? fromHeader : fromCookie === '' ? undefined : fromCookie,
    requestId,
    onAuthenticateHost: url.hostname === settings.authenticateUrl.hostname,
  };
}

/**
 * The URL as the browser used it: scheme from `x-forwarded-proto` (Envoy sets it; `http` when
 * absent), host and port from Host, path and query from the origin-form request target. Undefined
 * when any part is unusable: an absolute-form target or a Host that is more than a host and port.
 */
function requestUrl(req: IncomingMessage): URL | undefined {
  const forwarded = req.headers['x-forwarded-proto'];
  const proto = (typeof forwarded === 'string' ? forwarded : 'http').trim().toLowerCase();
  const host = req.headers.host;
  const target = req.url ?? '';
  if ((proto !== 'http' && proto !== 'https') || host === undefined || host === '' || !target.startsWith('/'))
    return undefined;
  if (target.startsWith('//')) return undefined;
  try {
    const origin = new URL(`${proto}://${host}`);
    if (
      origin.pathname !== '/' ||
      origin.search !== '' ||
      origin.hash !== '' ||
      origin.username !== '' ||
      origin.password !== ''
    )
      return undefined;
    return new URL(target, origin);
  } catch {
    return undefined;
  }
}

function isForm(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  try {
    return new MIMEType(contentType).essence === 'application/x-www-form-urlencoded';
  } catch {
    return false;
  }
}

/** The request body up to `max` bytes; 'too-large' past it (the rest is not read). */
async function readBody(req: IncomingMessage, max: number): Promise<Buffer | 'too-large'> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (Number.isFinite(declared) && declared > max) return 'too-large';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > max) return 'too-large';
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

/** Writes `response` with the security headers, Set-Cookie values and Content-Length. */
function write(res: ServerResponse, response: OwnResponse): void {
  const headers = new Map<string, string>();
  for (const [name, value] of SECURITY_HEADERS) headers.set(name, value);
  for (const [name, value] of response.headers) headers.set(name.toLowerCase(), value);
  const csp = headers.get('content-security-policy') ?? '';
  if (!csp.includes('frame-ancestors'))
    headers.set('content-security-policy', `${csp}; frame-ancestors 'none'`);
  const body = Buffer.from(response.body, 'utf8');
  res.statusCode = response.status;
  for (const [name, value] of headers) res.setHeader(name, value);
  if (response.setCookies.length > 0) res.setHeader('set-cookie', [...response.setCookies]);
  res.setHeader('content-length', body.length);
  res.end(body);
}

/**
 * The client's two requests to Portcullis, spoken by Node's HTTP clients (no hand-written HTTP):
 * the programmatic-login GET that answers a sign-in URL (HTTP/1.1 on a TLS connection of its own),
 * and the CONNECT that opens a tunnel (HTTP/2 on the endpoint's shared session, `h2-tunnel.ts`;
 * HTTP/1.1 when the server does not negotiate h2). Both send `Accept: application/json`, so the
 * authorizer answers an API client's errors (401 and a JSON `{error, reason, request_id}` body)
 * instead of a browser's sign-in redirect and HTML page.
 */
import { request } from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { Duplex, Readable } from 'node:stream';
import { PROGRAMMATIC_LOGIN_PATH, REDIRECT_URI_PARAM } from '../contract/endpoints.js';
import { PortcullisError } from '../shared/errors.js';
import type { TLSSocket } from 'node:tls';
import { openTls } from './endpoint.js';
import type { PortcullisEndpoint } from './endpoint.js';
import { connectFailure, h2Connect } from './h2-tunnel.js';
import type { TunnelSessions } from './h2-tunnel.js';

/** How long Portcullis may take to answer a request's headers (the CONNECT's includes ext_authz). */
const ANSWER_TIMEOUT_MS = 30_000;
/** Bound on an error or sign-in answer's body. */
const MAX_BODY_BYTES = 64 * 1024;

/** What a CONNECT came to. */
export type ConnectAnswer =
  /** 2xx: the tunnel; `socket` carries the target's bytes (any already received are unshifted). */
  | { readonly kind: 'open'; readonly socket: Duplex }
  /** 401 or a redirect: the token is missing, expired or revoked; sign in and try again. */
  | { readonly kind: 'sign-in' }
  /** Anything else: one line saying why, for the user. */
  | { readonly kind: 'refused'; readonly status: number; readonly message: string };

/**
 * Asks Portcullis for a sign-in URL whose flow ends at `redirectUri` with the token
 * (`GET <origin>/.portcullis/api/v1/login?portcullis_redirect_uri=...`). A refusal (400: the
 * redirect host is not allowed; 404: no route for this host) is a one-line PortcullisError with
 * the server's own text.
 */
export async function fetchSignInUrl(endpoint: PortcullisEndpoint, redirectUri: string): Promise<URL> {
  const path = `${PROGRAMMATIC_LOGIN_PATH}?${new URLSearchParams({ [REDIRECT_URI_PARAM]: redirectUri })}`;
  const socket = await openTls(endpoint);
  try {
    const res = await answer(socket, { method: 'GET', path, headers: { host: endpoint.origin.host } });
    const body = (await readBounded(res)).toString('utf8').trim();
    const status = res.statusCode ?? 0;
    if (status !== 200)
      throw new PortcullisError(
        'CLIENT_LOGIN',
        `${endpoint.origin.host} refused the programmatic login (${status}): ${oneLine(body) || res.statusMessage || 'no reason given'}`,
      );
    let url: URL;
    try {
      url = new URL(body);
    } catch {
      throw new PortcullisError(
        'CLIENT_LOGIN',
        `${endpoint.origin.host} answered the login with something that is not a URL`,
      );
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new PortcullisError(
        'CLIENT_LOGIN',
        `${endpoint.origin.host} answered the login with a ${url.protocol} URL`,
      );
    return url;
  } finally {
    socket.destroy();
  }
}

/**
 * Sends `CONNECT <authority>` with `Authorization: Portcullis <token>` (none when `token` is
 * undefined) on the endpoint's shared HTTP/2 session (or, when the server does not speak h2, over
 * HTTP/1.1 on a TLS connection of its own) and classifies the answer. Connection and TLS failures
 * reject (one-line PortcullisErrors); HTTP answers resolve.
 */
export async function sendConnect(
  endpoint: PortcullisEndpoint,
  sessions: TunnelSessions,
  authority: string,
  token: string | undefined,
): Promise<ConnectAnswer> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token !== undefined) headers.authorization = `Portcullis ${token}`;
  const transport = await sessions.transport();
  if (transport.kind === 'h1') return sendHttp1Connect(endpoint, transport.socket, authority, headers);
  const { status, stream } = await h2Connect(
    sessions,
    transport.session,
    authority,
    headers,
    ANSWER_TIMEOUT_MS,
  ).catch((err: Error) => Promise.reject(connectFailure(endpoint, err)));
  if (status >= 200 && status < 300) return { kind: 'open', socket: stream };
  const body = await readBounded(stream).catch(() => Buffer.alloc(0));
  stream.destroy();
  return classify(authority, status, '', body);
}

/** The HTTP/1.1 CONNECT (Node's client) over `socket`, for a server without h2. */
async function sendHttp1Connect(
  endpoint: PortcullisEndpoint,
  socket: TLSSocket,
  authority: string,
  headers: Record<string, string>,
): Promise<ConnectAnswer> {
  const req = request({
    method: 'CONNECT',
    path: authority,
    headers: { host: authority, ...headers },
    createConnection: () => socket,
    timeout: ANSWER_TIMEOUT_MS,
  });
  const connected = await new Promise<{ res: IncomingMessage; socket: Duplex; head: Buffer }>(
    (resolve, reject) => {
      req.once('connect', (res: IncomingMessage, tunnel: Duplex, head: Buffer) =>
        resolve({ res, socket: tunnel, head }),
      );
      req.once('timeout', () =>
        req.destroy(new Error(`no answer to CONNECT within ${ANSWER_TIMEOUT_MS / 1000} s`)),
      );
      req.once('error', (err) => reject(connectFailure(endpoint, err)));
      req.end();
    },
  );
  const status = connected.res.statusCode ?? 0;
  if (status >= 200 && status < 300) {
    if (connected.head.length > 0) connected.socket.unshift(connected.head);
    return { kind: 'open', socket: connected.socket };
  }
  const body = await readRest(connected.head, connected.socket, connected.res.headers['content-length']);
  connected.socket.destroy();
  return classify(authority, status, connected.res.statusMessage ?? '', body);
}

/** A refused CONNECT: 401 or a redirect asks for a sign-in, anything else is one line for the user. */
function classify(authority: string, status: number, statusText: string, body: Buffer): ConnectAnswer {
  if (status === 401 || (status >= 300 && status < 400)) return { kind: 'sign-in' };
  return { kind: 'refused', status, message: refusal(authority, status, statusText, body) };
}

/** The one line a refused CONNECT prints: the route, the status and the server's reason. */
export function refusal(authority: string, status: number, statusText: string, body: Buffer): string {
  const { reason, requestId } = jsonReason(body);
  const why = reason === undefined ? '' : `: ${reason}`;
  const id = requestId === undefined ? '' : ` (request id ${requestId})`;
  if (status === 403) return `access to ${authority} was denied (403)${why}${id}`;
  if (status === 502 || status === 503 || status === 504)
    return `the target ${authority} is unreachable (${status})${why}${id}`;
  if (status === 404) return `Portcullis has no TCP route for ${authority} (404)${why}${id}`;
  return `Portcullis refused the tunnel to ${authority} (${status} ${statusText})${why}${id}`.replace(
    ' )',
    ')',
  );
}

function jsonReason(body: Buffer): { reason?: string; requestId?: string } {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { reason?: unknown; request_id?: unknown } | null;
    return {
      ...(typeof parsed?.reason === 'string' ? { reason: oneLine(parsed.reason) } : {}),
      ...(typeof parsed?.request_id === 'string' ? { requestId: oneLine(parsed.request_id) } : {}),
    };
  } catch {
    return {};
  }
}

/** Text from the server, made safe for one terminal line (no control characters, bounded). */
function oneLine(text: string): string {
  return text
    .replace(/\p{Cc}+/gu, ' ')
    .trim()
    .slice(0, 300);
}

/** One request over `socket`; resolves with the response (headers read, body unread). */
function answer(
  socket: Duplex,
  options: { method: string; path: string; headers: Record<string, string> },
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request({ ...options, createConnection: () => socket, timeout: ANSWER_TIMEOUT_MS }, resolve);
    req.once('timeout', () => req.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS / 1000} s`)));
    req.once('error', (err) =>
      reject(
        err instanceof PortcullisError
          ? err
          : new PortcullisError('CLIENT_CONNECT', `the request to Portcullis failed: ${err.message}`),
      ),
    );
    req.end();
  });
}

/** A response body, at most MAX_BODY_BYTES (the rest is dropped). */
async function readBounded(res: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    if (size < MAX_BODY_BYTES) chunks.push(chunk.subarray(0, MAX_BODY_BYTES - size));
    size += chunk.length;
  }
  return Buffer.concat(chunks);
}

/**
 * The body of a refused CONNECT. Node hands every CONNECT answer over as a tunnel, so the body is
 * the bytes after the headers: read until the peer closes or Content-Length bytes have come
 * (bounded in size and time; an error answer is small).
 */
function readRest(head: Buffer, socket: Duplex, contentLength: string | undefined): Promise<Buffer> {
  const wanted = Math.min(
    contentLength === undefined ? MAX_BODY_BYTES : Number(contentLength) || 0,
    MAX_BODY_BYTES,
  );
  const chunks = [head];
  let size = head.length;
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      socket.removeListener('data', onData);
      resolve(Buffer.concat(chunks).subarray(0, wanted));
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= wanted) done();
    };
    const timer = setTimeout(done, 5_000);
    if (size >= wanted) return done();
    socket.on('data', onData);
    socket.once('end', done);
    socket.once('close', done);
    socket.once('error', done);
  });
}

/**
 * Stands in for Envoy + ext_authz in the client's unit tests: an HTTPS server (a throwaway
 * certificate) that answers the programmatic-login GET and CONNECT the way Portcullis does for an
 * API client. By default it speaks HTTP/2 (node:http2, ALPN h2 with HTTP/1.1 for the login GET) and
 * takes CONNECT as an h2 stream, as Envoy does; `{ http1: true }` makes it an HTTP/1.1-only server
 * (node:https, no ALPN; CONNECT through node:http's 'connect' event), for the client's fallback.
 * CONNECT is answered: 401 JSON
 * without a valid token, 403 JSON `{error, reason, request_id}` when the user is denied, 503 when
 * the target cannot be reached, else 200 and bytes piped to the target. A fake browser completes
 * a login by sending the token to the redirect URI, as the real sign-in flow's last redirect does.
 * Also: a TCP echo server and a plain CONNECT proxy (HTTPS_PROXY) for the same tests.
 */
import { once } from 'node:events';
import { request as httpRequest, createServer as createHttpServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createSecureServer } from 'node:http2';
import type { Http2ServerRequest, Http2ServerResponse, ServerHttp2Session } from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import { connect, createServer as createNetServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** What one CONNECT carried. */
export interface SeenConnect {
  readonly authority: string;
  /** The HTTP version the CONNECT came in ('2.0' or '1.1'). */
  readonly httpVersion: string;
  readonly authorization: string | undefined;
  readonly accept: string | undefined;
  readonly servername: string | undefined;
}

/** The fake's knobs and records. */
export interface FakePortcullis {
  readonly port: number;
  readonly connects: SeenConnect[];
  /** Login GETs seen (their Host headers and redirect URIs). */
  readonly logins: { readonly host: string | undefined; readonly redirectUri: string }[];
  /** Tokens CONNECT accepts. */
  readonly validTokens: Set<string>;
  /** Authorities CONNECT denies with 403 even with a valid token. */
  readonly denied: Set<string>;
  /** Authority -> upstream port the tunnel dials (unknown authorities: 404). */
  readonly upstreams: Map<string, number>;
  /** HTTP/2 sessions (TLS connections speaking h2) accepted so far. */
  sessionsSeen(): number;
  /** Logins so far; login n issues `token-<n>`, delivered by the fake browser. */
  issued: number;
  /** Where the fake browser sends each login's token: sign-in id -> callback URL with the token. */
  readonly callbacks: Map<string, string>;
  close(): Promise<void>;
}

/**
 * Starts the fake on 127.0.0.1 with `cert`/`key` (PEM); HTTP/2 unless `options.http1`, with at
 * most `options.maxConcurrentStreams` streams per connection (SETTINGS) when given.
 */
export async function startFakePortcullis(
  cert: string,
  key: string,
  options: { readonly http1?: boolean; readonly maxConcurrentStreams?: number } = {},
): Promise<FakePortcullis> {
  const sockets = new Set<Duplex>();
  const sessions = new Set<ServerHttp2Session>();
  let sessionCount = 0;
  const fake: FakePortcullis = {
    port: 0,
    connects: [],
    logins: [],
    validTokens: new Set(),
    denied: new Set(),
    upstreams: new Map(),
    issued: 0,
    callbacks: new Map(),
    sessionsSeen: () => sessionCount,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      for (const session of sessions) session.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const onLogin = (
    req: IncomingMessage | Http2ServerRequest,
    res: ServerResponse | Http2ServerResponse,
  ): void => answerLogin(fake, req, res);
  const server =
    options.http1 === true
      ? createHttpsServer({ cert, key, allowHalfOpen: true }, onLogin)
      : createSecureServer(
          {
            cert,
            key,
            allowHTTP1: true,
            ...(options.maxConcurrentStreams === undefined
              ? {}
              : { settings: { maxConcurrentStreams: options.maxConcurrentStreams } }),
          },
          onLogin,
        );
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    sessionCount += 1;
    session.once('close', () => sessions.delete(session));
  });
  if (options.http1 === true)
    server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      answerConnect(fake, req, socket, head);
    });
  // node:http2's compatibility layer emits an h2 CONNECT as 'connect' (request, response).
  else server.on('connect', (req: Http2ServerRequest) => answerH2Connect(fake, req, sockets));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return Object.assign(fake, { port: (server.address() as AddressInfo).port });
}

function answerLogin(
  fake: FakePortcullis,
  req: IncomingMessage | Http2ServerRequest,
  res: ServerResponse | Http2ServerResponse,
): void {
  const url = new URL(req.url ?? '/', 'https://fake');
  const redirectUri = url.searchParams.get('portcullis_redirect_uri');
  if (url.pathname !== '/.portcullis/api/v1/login' || redirectUri === null) {
    res.writeHead(404).end('not found');
    return;
  }
  fake.logins.push({ host: req.headers.host, redirectUri });
  fake.issued += 1;
  const token = `token-${fake.issued}`;
  fake.validTokens.add(token);
  const signIn = new URL('https://idp.invalid/sign_in');
  signIn.searchParams.set('login', String(fake.issued));
  fake.callbacks.set(String(fake.issued), `${redirectUri}?portcullis_jwt=${token}`);
  res.writeHead(200, { 'content-type': 'text/plain' }).end(`${signIn.href}\n`);
}

/** What the fake decides for a CONNECT: a refusal (status and JSON body) or the upstream port. */
function decide(
  fake: FakePortcullis,
  seen: SeenConnect,
): { status: number; body: object } | { upstreamPort: number } {
  fake.connects.push(seen);
  const token = seen.authorization?.replace(/^Portcullis /, '');
  if (token === undefined || !fake.validTokens.has(token))
    return { status: 401, body: { error: 'Unauthorized', reason: 'Sign in first.', request_id: 'r-401' } };
  if (fake.denied.has(seen.authority))
    return {
      status: 403,
      body: { error: 'Forbidden', reason: 'Your account is not allowed on this route.', request_id: 'r-403' },
    };
  const upstreamPort = fake.upstreams.get(seen.authority);
  if (upstreamPort === undefined)
    return {
      status: 404,
      body: { error: 'Not Found', reason: 'No route matches this request.', request_id: 'r-404' },
    };
  return { upstreamPort };
}

const UNREACHABLE = {
  status: 503,
  body: { error: 'Service Unavailable', reason: 'upstream connect error', request_id: 'r-503' },
};

/** An h2 CONNECT: the stream is the tunnel (END_STREAM each way is a half-close, as in Envoy). */
function answerH2Connect(fake: FakePortcullis, req: Http2ServerRequest, sockets: Set<Duplex>): void {
  const stream = req.stream;
  stream.on('error', () => stream.destroy());
  const refuse = ({ status, body }: { status: number; body: object }): void => {
    stream.respond({ ':status': status, 'content-type': 'application/json' });
    stream.end(JSON.stringify(body));
  };
  const decision = decide(fake, {
    authority: req.headers[':authority'] ?? '',
    httpVersion: req.httpVersion,
    authorization: req.headers.authorization,
    accept: req.headers.accept,
    servername: (stream.session?.socket as (Socket & { servername?: string }) | undefined)?.servername,
  });
  if ('status' in decision) return refuse(decision);
  const upstream = connect({ host: '127.0.0.1', port: decision.upstreamPort, allowHalfOpen: true });
  sockets.add(upstream);
  upstream.once('close', () => sockets.delete(upstream));
  upstream.once('error', () => refuse(UNREACHABLE));
  upstream.once('connect', () => {
    upstream.removeAllListeners('error');
    upstream.on('error', () => stream.destroy());
    stream.respond({ ':status': 200 });
    stream.pipe(upstream);
    upstream.pipe(stream);
  });
}

function answerConnect(fake: FakePortcullis, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  socket.on('error', () => socket.destroy());
  const decision = decide(fake, {
    authority: req.url ?? '',
    httpVersion: req.httpVersion,
    authorization: req.headers.authorization,
    accept: req.headers.accept,
    servername: (req.socket as Socket & { servername?: string }).servername,
  });
  if ('status' in decision) return refuse(socket, decision.status, decision.body);
  const upstream = connect({ host: '127.0.0.1', port: decision.upstreamPort, allowHalfOpen: true });
  upstream.once('error', () => refuse(socket, UNREACHABLE.status, UNREACHABLE.body));
  upstream.once('connect', () => {
    upstream.removeAllListeners('error');
    upstream.on('error', () => socket.destroy());
    // Node's server 'connect' event hands over the raw socket; the status line is the server's to write.
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    socket.pipe(upstream);
    upstream.pipe(socket);
  });
}

function refuse(socket: Duplex, status: number, body: object): void {
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
  );
}

/**
 * The fake browser: given a sign-in URL the fake Portcullis answered, goes to the client's
 * redirect URI with that login's token (as the IdP and the handoff would), in the background.
 */
export function fakeBrowser(fake: FakePortcullis, visits: string[] = []): (url: string) => Promise<void> {
  return async (url) => {
    visits.push(url);
    const to = fake.callbacks.get(new URL(url).searchParams.get('login') ?? '');
    if (to === undefined) throw new Error(`the fake browser got a sign-in URL it does not know: ${url}`);
    // Not awaited by the client: the browser's visit happens "later", as a real one does.
    void new Promise<void>((resolve, reject) => {
      httpRequest(to, (res) => {
        res.resume();
        res.once('end', resolve);
      })
        .once('error', reject)
        .end();
    }).catch(() => undefined);
  };
}

/** A TCP echo server on 127.0.0.1 that counts the bytes it received and echoes them back. */
export async function startEchoServer(): Promise<{ port: number; received: () => number; server: Server }> {
  let received = 0;
  const server = createNetServer({ allowHalfOpen: true }, (socket) => {
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
    });
    socket.on('error', () => socket.destroy());
    socket.pipe(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, received: () => received, server };
}

/** A plain HTTP CONNECT proxy (what HTTPS_PROXY names) that records the authorities it tunnelled to. */
export async function startConnectProxy(): Promise<{
  port: number;
  authorities: string[];
  close(): Promise<void>;
}> {
  const authorities: string[] = [];
  const sockets = new Set<Duplex>();
  const server = createHttpServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    sockets.add(socket);
    authorities.push(req.url ?? '');
    const target = new URL(`tcp://${req.url ?? ''}`);
    const upstream = connect({
      host: target.hostname.replace(/^\[|\]$/g, ''),
      port: Number(target.port),
      allowHalfOpen: true,
    });
    sockets.add(upstream);
    upstream.once('connect', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      socket.pipe(upstream);
      upstream.pipe(socket);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    authorities,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

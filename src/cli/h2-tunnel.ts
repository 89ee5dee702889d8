/**
 * CONNECT over HTTP/2 (node:http2): every tunnel to one Portcullis endpoint is a stream on one
 * shared TLS connection, and a tunnel half-closes with END_STREAM, which Envoy passes on to the
 * target as a FIN while the reply direction stays open (over HTTP/1.1 CONNECT Envoy closes the
 * whole tunnel when the client half-closes, losing the reply). A server that does not negotiate h2
 * in ALPN is spoken to with HTTP/1.1 CONNECT instead, one TLS connection per tunnel.
 */
import { connect as http2Connect, constants } from 'node:http2';
import type { ClientHttp2Session, ClientHttp2Stream, IncomingHttpHeaders } from 'node:http2';
import type { TLSSocket } from 'node:tls';
import { TUNNEL_ALPN_MARKER } from '../contract/names.js';
import { PortcullisError } from '../shared/errors.js';
import { openTls } from './endpoint.js';
import type { PortcullisEndpoint } from './endpoint.js';

/**
 * ALPN offered for tunnels: h2 first, HTTP/1.1 as the fallback, then the tunnel marker, which no
 * server selects but which sends the connection to Portcullis's tunnel filter chain (CONNECT only,
 * HTTP/2 windows sized for bulk copies instead of the 64 KiB per stream web clients get).
 */
export const TUNNEL_ALPN = ['h2', 'http/1.1', TUNNEL_ALPN_MARKER] as const;
/**
 * Receive windows: per stream (SETTINGS_INITIAL_WINDOW_SIZE) and for the whole connection, large
 * enough that a bulk transfer is bound by the network and the peer, not by WINDOW_UPDATE round trips.
 */
const STREAM_WINDOW_BYTES = 16 * 1024 * 1024;
const SESSION_WINDOW_BYTES = 64 * 1024 * 1024;
/** nghttp2's memory bound for the session (MB), above the windows so full windows are not an error. */
const MAX_SESSION_MEMORY_MB = 128;
/** The stream limit assumed until the server's SETTINGS say otherwise (Envoy's default is 100). */
const DEFAULT_MAX_STREAMS = 100;

/** What to send a CONNECT over: a stream on the shared h2 session, or this TLS socket (HTTP/1.1). */
export type TunnelTransport =
  | { readonly kind: 'h2'; readonly session: ClientHttp2Session }
  | { readonly kind: 'h1'; readonly socket: TLSSocket };

/**
 * The HTTP/2 connection(s) to one Portcullis endpoint, shared by every tunnel of a run: created on
 * first use and again after it closes (Envoy's idle timeout, a GOAWAY, a network error). When the
 * current session has as many open tunnels as the server allows streams, the next tunnel starts a
 * new session (the old one serves its tunnels until they end). One per endpoint per run; `close()`
 * when the run is done.
 */
export class TunnelSessions {
  /** The session new tunnels go on, and how many streams each live session has open. */
  private current: ClientHttp2Session | undefined;
  private readonly streams = new Map<ClientHttp2Session, number>();
  private dialling: Promise<ClientHttp2Session | undefined> | undefined;
  /** Set once the server answered ALPN without h2: every tunnel then uses HTTP/1.1 CONNECT. */
  private http1 = false;

  constructor(
    private readonly endpoint: PortcullisEndpoint,
    /** Lines for `--verbose` (the HTTP/1.1 fallback). */
    private readonly debug: (line: string) => void = () => undefined,
  ) {}

  /** The transport for the next CONNECT. Connection and TLS failures reject (one-line PortcullisErrors). */
  async transport(): Promise<TunnelTransport> {
    if (!this.http1) {
      const session = this.usable(this.current) ? this.current : await this.dial();
      if (session !== undefined) return { kind: 'h2', session };
    }
    return { kind: 'h1', socket: await openTls(this.endpoint, ['http/1.1']) };
  }

  /** Counts `stream` against its session's stream limit until it closes. */
  track(session: ClientHttp2Session, stream: ClientHttp2Stream): void {
    this.streams.set(session, (this.streams.get(session) ?? 0) + 1);
    stream.once('close', () => {
      if (!this.streams.has(session)) return; // the session is gone already
      const left = (this.streams.get(session) ?? 1) - 1;
      this.streams.set(session, left);
      if (left === 0 && session !== this.current) session.close();
    });
  }

  /** Closes every session (open tunnels on them end). */
  close(): void {
    for (const session of this.streams.keys()) session.destroy();
    this.current?.destroy();
    this.current = undefined;
  }

  private usable(session: ClientHttp2Session | undefined): session is ClientHttp2Session {
    if (session === undefined || session.closed || session.destroyed) return false;
    const limit = session.remoteSettings.maxConcurrentStreams ?? DEFAULT_MAX_STREAMS;
    return (this.streams.get(session) ?? 0) < limit;
  }

  /** One dial at a time: tunnels that need a session while one is being set up share it. */
  private dial(): Promise<ClientHttp2Session | undefined> {
    this.dialling ??= this.newSession().finally(() => {
      this.dialling = undefined;
    });
    return this.dialling;
  }

  private async newSession(): Promise<ClientHttp2Session | undefined> {
    const socket = await openTls(this.endpoint, TUNNEL_ALPN);
    if (socket.alpnProtocol !== 'h2') {
      this.debug(
        `${this.endpoint.origin.host} does not speak HTTP/2 (ALPN ${socket.alpnProtocol || 'none'}): tunnels use HTTP/1.1 CONNECT`,
      );
      this.http1 = true;
      socket.destroy();
      return undefined;
    }
    const session = http2Connect(this.endpoint.origin, {
      createConnection: () => socket,
      settings: { initialWindowSize: STREAM_WINDOW_BYTES, enablePush: false },
      maxSessionMemory: MAX_SESSION_MEMORY_MB,
    });
    session.setLocalWindowSize(SESSION_WINDOW_BYTES);
    // A failed session fails its streams (their tunnels report it); the next tunnel dials again.
    session.on('error', () => undefined);
    const forget = (): void => {
      this.streams.delete(session);
      if (this.current === session) this.current = undefined;
    };
    session.once('close', forget);
    session.once('goaway', forget);
    this.current = session;
    this.streams.set(session, 0);
    return session;
  }
}

/** The answer to an h2 CONNECT: its status and the stream (the tunnel when the status is 2xx). */
export interface H2Answer {
  readonly status: number;
  readonly stream: ClientHttp2Stream;
}

/**
 * Sends `CONNECT` for `authority` on `session` with `headers` and resolves once the response
 * headers came (within `timeoutMs`); a reset or session failure before that rejects.
 */
export function h2Connect(
  sessions: TunnelSessions,
  session: ClientHttp2Session,
  authority: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<H2Answer> {
  const stream = session.request(
    { [constants.HTTP2_HEADER_METHOD]: 'CONNECT', [constants.HTTP2_HEADER_AUTHORITY]: authority, ...headers },
    { endStream: false },
  );
  sessions.track(session, stream);
  return new Promise((resolve, reject) => {
    const fail = (err: Error): void => reject(err);
    stream.setTimeout(timeoutMs, () =>
      stream.destroy(new Error(`no answer to CONNECT within ${timeoutMs / 1000} s`)),
    );
    stream.once('error', fail);
    stream.once('close', () =>
      fail(new Error(`the stream was closed before an answer (code ${stream.rstCode ?? 'none'})`)),
    );
    stream.once('response', (answer: IncomingHttpHeaders) => {
      // The 'error' listener stays: until the tunnel is piped, a late reset must not be unhandled.
      stream.setTimeout(0);
      resolve({ status: Number(answer[constants.HTTP2_HEADER_STATUS] ?? 0), stream });
    });
  });
}

/** A one-line PortcullisError for a CONNECT that failed below HTTP. */
export function connectFailure(endpoint: PortcullisEndpoint, err: Error): PortcullisError {
  return err instanceof PortcullisError
    ? err
    : new PortcullisError('CLIENT_CONNECT', `the CONNECT to ${endpoint.origin.host} failed: ${err.message}`);
}

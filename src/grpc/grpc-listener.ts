/**
 * The listening socket of the gRPC server on `grpc_address`, owned here rather than by grpc-js
 * (`bindAsync`), so that what peers can make Portcullis hold in file descriptors is bounded:
 * accepted TCP connections are counted per peer address and overall and refused (closed at once)
 * past either bound, and only then handed to grpc-js (`createConnectionInjector`), which runs TLS
 * (when the credentials have it) and HTTP/2 on them with the same options and handlers as a bound
 * port. A connection that HTTP/2 ended (nghttp2 sends GOAWAY after a protocol error and stops
 * reading, so its peer's close goes unseen) is destroyed by the server's keepalive, within 15 s
 * (grpc-limits.ts); the bounds keep what such connections hold in the meantime small.
 *
 * Why: with grpc-js's own listener and a one-minute keepalive, 3,000 short malformed exchanges
 * held ~740 descriptors in CLOSE-WAIT for 60 to 90 s, and under a 512-descriptor limit health,
 * metrics and reloads failed until they expired.
 */
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from '../shared/logger.js';

/** How many connections the gRPC port holds open at once. */
export interface GrpcConnectionLimits {
  /** From one peer address (IPv4, or IPv6 as written by the socket). */
  readonly perPeer: number;
  /** From all peers together. */
  readonly total: number;
}

/**
 * The defaults: an Envoy opens one ADS connection and one ext_authz connection per worker (more
 * only past 100 concurrent streams each), and a databroker client one; 256 per peer leaves room
 * for dozens of Envoys behind one address, and 4,096 overall stays far inside the usual
 * descriptor limits while a peer at its bound cannot shut others out.
 */
export const GRPC_CONNECTION_LIMITS: GrpcConnectionLimits = { perPeer: 256, total: 4096 };

/** Counters of the gRPC listener, for tests and metrics. */
export interface GrpcListenerStats {
  /** Connections open now (accepted and not yet closed). */
  readonly open: number;
  /** Connections refused at accept because a bound was reached, since start. */
  readonly refused: number;
}

/** A gRPC listener: its bound port, its counters and how to stop it. */
export interface GrpcListener {
  readonly port: number;
  stats(): GrpcListenerStats;
  /** Stops accepting at once; connections already open are left to the gRPC server's shutdown. */
  close(): void;
}

/** Where and how `listenGrpc` listens. */
export interface GrpcListenOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly credentials: grpc.ServerCredentials;
  readonly limits?: GrpcConnectionLimits;
  readonly logger: Logger;
}

/** A refused connection is logged at most this often (a flood must not flood the log). */
const REFUSAL_LOG_INTERVAL_MS = 10_000;

/**
 * Listens on `host:port` and serves `server`'s services on every connection accepted within the
 * limits (GRPC_CONNECTION_LIMITS by default). A host name (`localhost`) is listened on at each of
 * its addresses, on one port, as grpc-js's `bindAsync` does; the first must listen, a later one
 * that cannot (no IPv6, say) is logged and skipped. Rejects with the first address's listen error
 * (EADDRINUSE, ...); the caller names the option. The counters live in the returned object only.
 */
export async function listenGrpc(server: grpc.Server, options: GrpcListenOptions): Promise<GrpcListener> {
  const limits = options.limits ?? GRPC_CONNECTION_LIMITS;
  const addresses =
    net.isIP(options.host) !== 0
      ? [options.host]
      : (await lookup(options.host, { all: true })).map((found) => found.address);
  const injector = server.createConnectionInjector(options.credentials);
  const perPeer = new Map<string, number>();
  let open = 0;
  let refused = 0;
  let lastRefusalLog = 0;
  const accept = (socket: net.Socket): void => {
    const peer = socket.remoteAddress ?? 'unknown';
    const fromPeer = perPeer.get(peer) ?? 0;
    if (fromPeer >= limits.perPeer || open >= limits.total) {
      refused += 1;
      socket.on('error', () => undefined);
      socket.destroy();
      const now = Date.now();
      if (now - lastRefusalLog >= REFUSAL_LOG_INTERVAL_MS) {
        lastRefusalLog = now;
        options.logger.warn(
          { peer, from_peer: fromPeer, open, refused, limits },
          'gRPC connection refused: too many open connections from this peer or in all',
        );
      }
      return;
    }
    open += 1;
    perPeer.set(peer, fromPeer + 1);
    socket.once('close', () => {
      open -= 1;
      const left = (perPeer.get(peer) ?? 1) - 1;
      if (left <= 0) perPeer.delete(peer);
      else perPeer.set(peer, left);
    });
    socket.on('error', () => socket.destroy());
    injector.injectConnection(socket);
  };
  const listeners: net.Server[] = [];
  let port = options.port;
  try {
    for (const [index, address] of addresses.entries()) {
      const listener = net.createServer({ noDelay: true }, accept);
      try {
        port = await listen(listener, address, port);
      } catch (err) {
        if (index === 0) throw err;
        options.logger.warn(
          { err, address, port },
          'gRPC: cannot listen on one address of grpc_address; skipped',
        );
        continue;
      }
      listener.on('error', (err) => options.logger.warn({ err }, 'gRPC listener error'));
      listeners.push(listener);
    }
  } catch (err) {
    injector.destroy();
    throw err;
  }
  return {
    port,
    stats: () => ({ open, refused }),
    close: () => {
      for (const listener of listeners) listener.close();
    },
  };
}

/** Listens on `host:port`; resolves with the bound port, or rejects with the listen error. */
function listen(listener: net.Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    listener.once('error', reject);
    listener.listen({ host, port }, () => {
      listener.off('error', reject);
      resolve((listener.address() as net.AddressInfo).port);
    });
  });
}

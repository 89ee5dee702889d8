import net, { type AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { errorMessage } from '../../../shared/errors.js';
import type { Logger } from '../../../shared/logger.js';
import { CHECK_METHOD_PATH } from '../check-call.js';
import { firstRequestPath } from './first-request-path.js';
import type { H2cConnectionOptions } from './h2c-limits.js';
import { H2cConnectionSet } from './h2c-check-server.js';

/** How long a new connection may take to send its first HEADERS before grpc-js gets it. */
const DEFAULT_CLASSIFY_TIMEOUT_MS = 100;
/** Bytes read while looking for the first HEADERS; a client that needs more goes to grpc-js. */
const MAX_PEEK_BYTES = 64 * 1024;

/** The debug line logged for each connection with the server it went to (`served_by`). */
export const ROUTED_LOG = 'gRPC listener: connection routed';

/** Where Check calls are served: the hand-rolled h2c server (production) or grpc-js (comparison). */
export type CheckTransport = 'h2c' | 'grpc-js';

/** What `listenSharedGrpcPort` needs. */
export interface SharedGrpcListenerOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** The grpc-js server with every service (ADS, and Authorization for clients routed to it). */
  readonly grpcServer: grpc.Server;
  /** The h2c Check server's authorizer and logger. */
  readonly check: H2cConnectionOptions;
  readonly logger: Logger;
  readonly transport?: CheckTransport;
  readonly classifyTimeoutMs?: number;
}

/** The listening port; `close` stops accepting and ends every connection of both servers. */
export interface SharedGrpcListener {
  readonly port: number;
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * One port for everything gRPC (the spec's `grpc_address`): a `net.Server` reads each new
 * connection's first bytes (preface, SETTINGS, the first HEADERS block) and decodes the first
 * request's `:path`. A connection whose first request is `Authorization/Check` (Envoy's ext_authz
 * cluster, which carries only Check) is served by the h2c Check server; any other connection
 * (ADS, other clients, anything that is not h2c, or a client that sends no HEADERS within
 * `classifyTimeoutMs`, e.g. one waiting for the server's SETTINGS) is handed to grpc-js through
 * its connection injector, with the peeked bytes pushed back so grpc-js reads from byte 0. With
 * `transport: 'grpc-js'` every connection goes to grpc-js.
 */
export async function listenSharedGrpcPort(options: SharedGrpcListenerOptions): Promise<SharedGrpcListener> {
  const injector = options.grpcServer.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  const checks = new H2cConnectionSet(options.check);
  const toGrpc = (socket: net.Socket, peeked: Buffer): void => {
    if (peeked.length > 0) socket.unshift(peeked);
    injector.injectConnection(socket);
  };
  const classifying = new Set<net.Socket>();
  const route = (socket: net.Socket): void => {
    if (options.transport === 'grpc-js') {
      toGrpc(socket, Buffer.alloc(0));
      return;
    }
    classifying.add(socket);
    classify(socket, options.classifyTimeoutMs ?? DEFAULT_CLASSIFY_TIMEOUT_MS, (peeked, isCheck) => {
      classifying.delete(socket);
      if (socket.destroyed) return;
      options.logger.debug(
        { remote: socket.remoteAddress, served_by: isCheck ? 'h2c' : 'grpc-js', peeked_bytes: peeked.length },
        ROUTED_LOG,
      );
      if (isCheck) {
        checks.adopt(socket, peeked);
        socket.resume();
      } else {
        toGrpc(socket, peeked);
      }
    });
  };
  const server = net.createServer({ noDelay: true }, route);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => options.logger.error({ error: errorMessage(err) }, 'gRPC listener error'));
  return {
    port: (server.address() as AddressInfo).port,
    close: ({ graceMs = 0 } = {}) =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of classifying) socket.destroy();
        checks.shutdown();
        injector.drain(graceMs);
        injector.destroy();
      }),
  };
}

/**
 * Reads from `socket` until its first request's path is known, the bytes are not h2c, the peek
 * bound is reached or `timeoutMs` passes, then stops reading and calls `decide` once with
 * everything read so far.
 */
function classify(
  socket: net.Socket,
  timeoutMs: number,
  decide: (peeked: Buffer, isCheck: boolean) => void,
): void {
  let peeked: Buffer = Buffer.alloc(0);
  let decided = false;
  const finish = (isCheck: boolean): void => {
    if (decided) return;
    decided = true;
    clearTimeout(timer);
    socket.pause();
    socket.off('data', onData);
    socket.off('close', onClose);
    socket.off('error', onError);
    decide(peeked, isCheck);
  };
  const onData = (chunk: Buffer): void => {
    peeked = peeked.length === 0 ? chunk : Buffer.concat([peeked, chunk]);
    const first = firstRequestPath(peeked);
    if (first.kind === 'path') finish(first.path === CHECK_METHOD_PATH);
    else if (first.kind === 'not-h2c' || peeked.length > MAX_PEEK_BYTES) finish(false);
  };
  const onClose = (): void => finish(false);
  const onError = (): void => {
    socket.destroy();
  };
  const timer = setTimeout(() => finish(false), timeoutMs);
  socket.on('data', onData);
  socket.once('close', onClose);
  socket.on('error', onError);
}

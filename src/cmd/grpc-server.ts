import type * as grpc from '@grpc/grpc-js';
import type { IRProcess } from '../ir/services.js';
import type { DerivedTls } from '../pki/derived-tls.js';
import { listenGrpc, type GrpcListener } from '../grpc/grpc-listener.js';
import { internalServerCredentials } from '../grpc/internal-grpc.js';
import { PortcullisError, errorMessage } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { isLoopbackIp } from '../shared/loopback.js';

/** Warns when gRPC is served in plain text off loopback (`grpc_insecure` without `tls_derive`). */
export function warnInsecureGrpc(process: IRProcess, logger: Logger): void {
  const { host, port } = process.grpc;
  if (
    process.grpcInsecure &&
    process.tlsDerive === undefined &&
    !isLoopbackIp(host) &&
    host !== 'localhost'
  ) {
    logger.warn(
      { grpc_address: `${host.includes(':') ? `[${host}]` : host}:${port}` },
      'grpc_insecure: gRPC is served without TLS off loopback; keep the port on a private network (or set tls_derive)',
    );
  }
}

/**
 * Listens on `host:port` (0 picks a free port) for `server` through grpc-listener.ts (connections
 * bounded per peer and overall), with the derived TLS when `tls_derive` is set; a failure is
 * GRPC_BIND_FAILED naming the address, so a taken `grpc_address` says which option to change.
 */
export async function bindGrpc(
  server: grpc.Server,
  address: { readonly host: string; readonly port: number },
  tls: DerivedTls | undefined,
  logger: Logger,
): Promise<GrpcListener> {
  const { host, port } = address;
  const target = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  try {
    return await listenGrpc(server, { host, port, credentials: internalServerCredentials(tls), logger });
  } catch (err) {
    throw new PortcullisError(
      'GRPC_BIND_FAILED',
      `cannot listen on grpc_address ${target}: ${errorMessage(err)}`,
    );
  }
}

/** Stops `server`: in-flight calls get `graceMs` to finish, then every connection is closed. */
export function shutdownGrpc(server: grpc.Server, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const force = setTimeout(() => server.forceShutdown(), graceMs);
    server.tryShutdown(() => {
      clearTimeout(force);
      resolve();
    });
  });
}

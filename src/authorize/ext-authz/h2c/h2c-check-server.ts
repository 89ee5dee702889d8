import net, { type AddressInfo } from 'node:net';
import { errorMessage } from '../../../shared/errors.js';
import { H2cCheckConnection } from './h2c-check-connection.js';
import type { H2cConnectionOptions } from './h2c-limits.js';

/**
 * The h2c Check connections of one listener, so shutdown can reach them all: each gets
 * GOAWAY(NO_ERROR) and is closed once its answers are written.
 */
export class H2cConnectionSet {
  private readonly connections = new Set<H2cCheckConnection>();

  constructor(private readonly options: H2cConnectionOptions) {}

  /** Serves Check on `socket`; `initialBytes` are bytes already read from it (port sharing). */
  adopt(socket: net.Socket, initialBytes?: Buffer): void {
    const connection = new H2cCheckConnection(socket, this.options, initialBytes);
    this.connections.add(connection);
    socket.once('close', () => this.connections.delete(connection));
  }

  /** Open connections (for tests and shutdown). */
  get size(): number {
    return this.connections.size;
  }

  /** GOAWAY to every open connection, then close them. */
  shutdown(): void {
    for (const connection of this.connections) connection.shutdown();
  }
}

/** A listening h2c Check server (tests and benchmarks; production shares the gRPC port). */
export interface H2cCheckServer {
  readonly port: number;
  readonly connections: H2cConnectionSet;
  /** Stops listening, sends GOAWAY on open connections and resolves when all are closed. */
  close(): Promise<void>;
}

/**
 * Listens on `host:port` (0: any free port) and serves `envoy.service.auth.v3.Authorization/Check`
 * over h2c on every connection (see `H2cCheckConnection`).
 */
export async function startH2cCheckServer(
  options: H2cConnectionOptions & { readonly host: string; readonly port: number },
): Promise<H2cCheckServer> {
  const connections = new H2cConnectionSet(options);
  const server = net.createServer((socket) => connections.adopt(socket));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) =>
    options.logger.error({ error: errorMessage(err) }, 'ext_authz h2c: listener error'),
  );
  return {
    port: (server.address() as AddressInfo).port,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        connections.shutdown();
      }),
  };
}

import * as grpc from '@grpc/grpc-js';
import { createDatabrokerClient, type DatabrokerClientOptions } from '../../src/databroker/grpc/client.js';
import { registerDatabrokerService, type DatabrokerService } from '../../src/databroker/grpc/service.js';
import { silentLogger, type Logger } from '../../src/shared/logger.js';
import type { RecordBackend } from '../../src/session/records.js';

/** The internal token the test databroker accepts. */
export const TEST_INTERNAL_TOKEN = 'test-internal-token';

/** Call credentials that send `token` as `authorization: Bearer <token>` on every call. */
export function bearerCallCredentials(token: string = TEST_INTERNAL_TOKEN): grpc.CallCredentials {
  return grpc.credentials.createFromMetadataGenerator((_params, callback) => {
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${token}`);
    callback(null, metadata);
  });
}

/** A databroker gRPC server on loopback over `backend`. */
export interface TestDatabroker {
  readonly port: number;
  readonly address: string;
  readonly service: DatabrokerService;
  /** Ends the server at once (open streams are cut, as when the process dies). */
  kill(): void;
}

/**
 * Starts the databroker service over `backend` on 127.0.0.1 (`port`, or one the kernel picks),
 * accepting calls whose metadata holds `Bearer TEST_INTERNAL_TOKEN`.
 */
export async function startTestDatabroker(
  backend: RecordBackend,
  options: { port?: number; logger?: Logger; maxPendingEvents?: number } = {},
): Promise<TestDatabroker> {
  const server = new grpc.Server();
  const service = registerDatabrokerService(server, backend, {
    authorize: (metadata) => {
      const values = metadata.get('authorization');
      return values.length === 1 && values[0] === `Bearer ${TEST_INTERNAL_TOKEN}`;
    },
    logger: options.logger ?? silentLogger,
    ...(options.maxPendingEvents === undefined ? {} : { maxPendingEvents: options.maxPendingEvents }),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      `127.0.0.1:${options.port ?? 0}`,
      grpc.ServerCredentials.createInsecure(),
      (err, bound) => (err === null ? resolve(bound) : reject(err)),
    ),
  );
  return {
    port,
    address: `127.0.0.1:${port}`,
    service,
    kill: () => server.forceShutdown(),
  };
}

/** A databroker client of `address` with the test token and short deadlines and backoff. */
export function testDatabrokerClient(
  address: string,
  options: Partial<DatabrokerClientOptions> = {},
): RecordBackend {
  return createDatabrokerClient({
    address,
    credentials: grpc.credentials.createInsecure(),
    callCredentials: bearerCallCredentials(),
    timeoutMs: 2_000,
    // Reads get the whole deadline: the first call also connects the channel, which on a loaded
    // machine can take longer than the production read deadline. Tests of that deadline set it.
    readTimeoutMs: 2_000,
    logger: silentLogger,
    watchBackoff: { initialMs: 20, maxMs: 200 },
    channelOptions: { 'grpc.max_reconnect_backoff_ms': 200 },
    ...options,
  });
}

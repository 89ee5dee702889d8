import type { IRDatabroker } from '../ir/services.js';
import type { Secret } from '../shared/secret.js';
import type { RecordBackend } from '../session/records.js';
import type { Logger } from '../shared/logger.js';
import type { Telemetry } from '../contract/telemetry.js';
import { errorMessage } from '../shared/errors.js';
import { MemoryBackend } from './memory-backend.js';
import { createRedisBackend } from './redis/redis-backend.js';
import { createDatabrokerClient } from './grpc/client.js';
import { SealedRecords } from './sealed-records.js';
import { RecordSessionStore } from './record-session-store.js';
import { serviceTarget } from '../shared/address.js';
import type { InternalClient } from '../grpc/internal-client.js';

/**
 * The session store of one process, from the bottom up: the record backend (this process's
 * databroker in memory or on Redis, or a separately run databroker over gRPC), the sealing layer
 * (records encrypted with a key from `shared_secret`) and the session store with its cache kept
 * exact by the change feed. Every deployment uses the same stack; only the backend differs.
 */
export interface SessionStack {
  readonly backend: RecordBackend;
  readonly records: SealedRecords;
  readonly sessions: RecordSessionStore;
  close(): Promise<void>;
}

/**
 * Opens the stack for `databroker` (the IR's): `runsDatabroker` picks this process's own backend
 * (memory, or Redis at `connection`), otherwise the gRPC client of `databroker_service_url`. Redis that
 * cannot be reached at start is logged, not fatal: the client keeps reconnecting, public routes
 * serve, and requests that need a session get 503 until it answers. The sealing key is the first
 * config's `shared_secret` (records sealed under one secret cannot be opened under another).
 */
export async function openSessionStack(options: {
  readonly databroker: IRDatabroker;
  /** `databroker_storage_connection_string` (the key ring's), for Redis. */
  readonly connection: Secret<string> | undefined;
  /** `grpc_client_timeout`: the deadline of each call to a remote databroker, ms. */
  readonly clientTimeoutMs: number;
  readonly runsDatabroker: boolean;
  readonly sharedSecret: Uint8Array;
  /** How this process reaches the other services (credentials, TLS), for a remote databroker. */
  readonly internal: InternalClient;
  readonly logger: Logger;
  /** Where session store errors are counted (metrics); default none. */
  readonly telemetry?: Telemetry;
}): Promise<SessionStack> {
  const { databroker, logger } = options;
  const backend = await openBackend(options);
  const records = new SealedRecords(backend, {
    secret: () => options.sharedSecret,
    logger: logger.child({ component: 'records' }),
  });
  const sessions = new RecordSessionStore(records, {
    outageGraceMs: databroker.outageGraceMs,
    logger: logger.child({ component: 'sessions' }),
    ...(options.telemetry === undefined ? {} : { telemetry: options.telemetry }),
  });
  return {
    backend,
    records,
    sessions,
    async close() {
      sessions.close();
      await backend.close();
    },
  };
}

async function openBackend(options: {
  readonly databroker: IRDatabroker;
  readonly connection: Secret<string> | undefined;
  readonly clientTimeoutMs: number;
  readonly runsDatabroker: boolean;
  readonly internal: InternalClient;
  readonly logger: Logger;
}): Promise<RecordBackend> {
  const { databroker, logger } = options;
  if (!options.runsDatabroker) {
    // Validation requires databroker_service_url wherever sessions are used without a databroker.
    if (databroker.serviceUrl === undefined)
      throw new Error('databroker_service_url is unset (validation requires it)');
    const url = new URL(databroker.serviceUrl);
    const target = serviceTarget(url);
    return createDatabrokerClient({
      address: `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`,
      ...options.internal.channel('databroker', url),
      timeoutMs: options.clientTimeoutMs,
      logger: logger.child({ component: 'databroker-client' }),
    });
  }
  if (databroker.storage === 'memory') {
    logger.warn(
      { databroker_storage_type: 'memory' },
      'sessions are kept in this process only: they are lost on restart and not shared with other instances (set databroker_storage_type: redis to run several)',
    );
    return new MemoryBackend();
  }
  const url = options.connection?.reveal();
  if (url === undefined)
    throw new Error('databroker_storage_connection_string is unset (validation requires it)');
  const redis = createRedisBackend({ url, logger: logger.child({ component: 'redis' }) });
  try {
    await redis.connect();
  } catch (err) {
    logger.warn(
      { err: errorMessage(err) },
      'Redis is not reachable yet: requests that need a session get 503 until it answers; reconnecting in the background',
    );
  }
  return redis;
}

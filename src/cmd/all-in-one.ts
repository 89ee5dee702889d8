import * as grpc from '@grpc/grpc-js';
import { PortcullisError, errorMessage } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { Reloader } from '../runtime/reloader.js';
import { systemCaFile } from '../runtime/system-ca.js';
import { AdsServer } from '../xds/server/ads-server.js';
import { SnapshotStore } from '../xds/snapshot/snapshot-store.js';
import { MemorySessionStore } from '../databroker/memory-session-store.js';
import { AuthorizeService } from '../runtime/authorize-service.js';
import type { Authorizer } from '../authorize/ext-authz/authorization-service.js';
import { splitHostPort } from '../runtime/address.js';
import { buildBootstrap, isLoopbackAddress, type AdsApiType } from '../envoy/bootstrap.js';
import { locateEnvoy } from '../envoy/locate.js';
import { EnvoySupervisor } from '../envoy/supervisor.js';
import { envoyHeapBudget } from '../envoy/heap-budget.js';
import {
  listenSharedGrpcPort,
  type CheckTransport,
  type SharedGrpcListener,
} from '../authorize/ext-authz/h2c/shared-grpc-listener.js';

/** Options of the all-in-one composition root; tests pass their own ports and logger. */
export interface AllInOneOptions {
  readonly configPath: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger & { level?: string };
  /** Delta (default) or state-of-the-world ADS for the supervised Envoy. */
  readonly adsApiType?: AdsApiType;
  /** Start no Envoy (sidecar mode: an Envoy started separately connects over ADS). */
  readonly withoutEnvoy?: boolean;
  readonly reloadDebounceMs?: number;
  /**
   * Who answers ext_authz Check on the gRPC port: the h2c Check server (default) or grpc-js
   * (benchmarks compare the two).
   */
  readonly checkTransport?: CheckTransport;
  /**
   * Wraps the authorizer both Check transports answer with. Only benchmarks set it (to measure the
   * ext_authz hop with the decision taken out); production answers with the authorizer itself.
   */
  readonly wrapAuthorizer?: (authorizer: Authorizer) => Authorizer;
}

/** A running all-in-one Portcullis: its parts, for tests, and a graceful `stop`. */
export interface AllInOne {
  readonly store: SnapshotStore;
  /** The session store (in memory in all-in-one mode). */
  readonly sessions: MemorySessionStore;
  readonly authorize: AuthorizeService;
  readonly reloader: Reloader;
  readonly ads: AdsServer;
  readonly grpcPort: number;
  readonly supervisor: EnvoySupervisor | undefined;
  stop(options?: { graceMs?: number }): Promise<void>;
}

/**
 * Starts Portcullis all-in-one: load and validate the config (an invalid first config throws, as
 * there is nothing to keep serving), publish its snapshot, serve ADS on `grpc_address`, spawn and
 * supervise Envoy from a generated bootstrap, and watch the config for hot reload.
 */
export async function startAllInOne(options: AllInOneOptions): Promise<AllInOne> {
  const { logger } = options;
  const store = new SnapshotStore();
  const sessions = new MemorySessionStore();
  const authorize = new AuthorizeService(sessions, logger);
  const caFile = systemCaFile(options.env);
  const reloader = new Reloader({
    configPath: options.configPath,
    env: options.env,
    translate: (config) => ({ systemCaFile: caFile, internal: authorize.internalFor(config) }),
    beforePublish: (result) => authorize.install(result.config, result.ir),
    store,
    logger,
    ...(options.reloadDebounceMs === undefined ? {} : { debounceMs: options.reloadDebounceMs }),
  });
  const initial = reloader.loadInitial();
  // Find Envoy before opening any port, so a missing Envoy fails fast with its instructions.
  const envoy = options.withoutEnvoy === true ? undefined : await locateEnvoy(options.env);
  if (logger.level !== undefined) logger.level = initial.config.log_level;
  const ads = new AdsServer({ source: store, logger });
  const server = new grpc.Server({ 'grpc.max_send_message_length': 16 * 1024 * 1024 });
  ads.register(server);
  const ownAuthorizer = authorize.authorizer();
  const authorizer = options.wrapAuthorizer?.(ownAuthorizer) ?? ownAuthorizer;
  authorize.register(server, authorizer);
  const { host, port } = splitHostPort(initial.config.grpc_address);
  if (!isLoopbackAddress(host)) {
    logger.warn(
      { grpc_address: initial.config.grpc_address },
      'grpc_address is not loopback: the ADS port is unauthenticated, expose it only to Envoy',
    );
  }
  const listener = await listenGrpc(server, {
    host,
    port,
    check: { authorize: authorizer, logger },
    logger,
    ...(options.checkTransport === undefined ? {} : { transport: options.checkTransport }),
  });
  const grpcPort = listener.port;
  logger.info(
    {
      grpc_address: `${host}:${grpcPort}`,
      routes: initial.config.routes.length,
      version: initial.snapshot.version,
    },
    'ADS server listening',
  );
  let supervisor: EnvoySupervisor | undefined;
  if (envoy !== undefined) {
    try {
      if (envoy.outdated)
        logger.warn(
          { version: envoy.version },
          'Envoy is older than 1.40.0 and misses security fixes; upgrade it',
        );
      const admin = splitHostPort(initial.config.envoy_admin_address);
      supervisor = new EnvoySupervisor({
        binary: envoy.path,
        logger,
        bootstrap: buildBootstrap({
          ads: { address: host === '0.0.0.0' ? '127.0.0.1' : host, port: grpcPort },
          adsApiType: options.adsApiType ?? 'DELTA_GRPC',
          admin: { address: admin.host, port: admin.port },
          maxHeapSizeBytes: envoyHeapBudget(),
        }),
      });
      await supervisor.start();
      logger.info(
        { envoy: envoy.path, version: envoy.version, admin: initial.config.envoy_admin_address },
        'Envoy started',
      );
    } catch (err) {
      ads.close();
      reloader.close();
      await listener.close();
      server.forceShutdown();
      throw err;
    }
  }
  return {
    store,
    sessions,
    authorize,
    reloader,
    ads,
    grpcPort,
    supervisor,
    async stop(stopOptions = {}) {
      reloader.close();
      await supervisor?.stop({ graceMs: stopOptions.graceMs ?? 0 });
      ads.close();
      await listener.close();
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    },
  };
}

/**
 * Listens on `grpc_address` with one port for ADS and ext_authz (see `listenSharedGrpcPort`):
 * Envoy's ext_authz connections are served by the h2c Check server, the rest by `server`.
 */
async function listenGrpc(
  server: grpc.Server,
  options: Omit<Parameters<typeof listenSharedGrpcPort>[0], 'grpcServer'>,
): Promise<SharedGrpcListener> {
  try {
    return await listenSharedGrpcPort({ ...options, grpcServer: server });
  } catch (err) {
    const target = options.host.includes(':')
      ? `[${options.host}]:${options.port}`
      : `${options.host}:${options.port}`;
    throw new PortcullisError(
      'GRPC_BIND_FAILED',
      `cannot listen on grpc_address ${target}: ${errorMessage(err)}`,
    );
  }
}

import * as grpc from '@grpc/grpc-js';
import { PortcullisError, errorMessage } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { Reloader } from '../runtime/reloader.js';
import { MakeBeforeBreak } from '../runtime/make-before-break.js';
import type { GoodBuild } from '../runtime/build-pipeline.js';
import { runnableParts, type ServiceParts } from './services.js';
import { systemCaFile } from '../runtime/system-ca.js';
import { AdsServer } from '../xds/server/ads-server.js';
import { SnapshotStore } from '../xds/snapshot/snapshot-store.js';
import { MemorySessionStore } from '../databroker/memory-session-store.js';
import { AuthorizeService } from '../runtime/authorize-service.js';
import { AuthenticateService } from '../runtime/authenticate-service.js';
import { IdentityResolver } from '../runtime/identity.js';
import { ownHttpAddress } from '../runtime/authenticate-settings.js';
import { splitHostPort } from '../runtime/address.js';
import { buildBootstrap, type AdsApiType } from '../envoy/bootstrap.js';
import { isLoopbackIp } from '../shared/loopback.js';
import { locateEnvoy, type LocatedEnvoy } from '../envoy/locate.js';
import { EnvoySupervisor } from '../envoy/supervisor.js';
import { envoyHeapBudget } from '../envoy/heap-budget.js';
import { grpcServerOptions } from '../runtime/grpc-limits.js';

/** Options of the all-in-one composition root; tests pass their own ports and logger. */
export interface AllInOneOptions {
  readonly configPath: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger & { level?: string };
  /** Delta (default) or state-of-the-world ADS for the supervised Envoy. */
  readonly adsApiType?: AdsApiType;
  /** Start no Envoy (sidecar mode: an Envoy started separately connects over ADS). */
  readonly withoutEnvoy?: boolean;
  /** How long an in-place config write must stay unchanged before it is loaded (Reloader's `settleMs`). */
  readonly reloadSettleMs?: number;
  /** Deadline of each identity-provider call (default 10 s); tests of a slow IdP shorten it. */
  readonly idpTimeoutMs?: number;
}

/** A running all-in-one Portcullis: its parts, for tests, and a graceful `stop`. */
export interface AllInOne {
  readonly store: SnapshotStore;
  /** The session store (in memory in all-in-one mode). */
  readonly sessions: MemorySessionStore;
  readonly authorize: AuthorizeService;
  /** The authenticate service: sign-in, sign-out, user page, programmatic login, session refresh. */
  readonly authenticate: AuthenticateService;
  readonly reloader: Reloader;
  readonly ads: AdsServer;
  /** Publishes each build's snapshot, keeping dropped clusters until every Envoy applied its routes. */
  readonly publisher: MakeBeforeBreak;
  readonly grpcPort: number;
  readonly supervisor: EnvoySupervisor | undefined;
  stop(options?: { graceMs?: number }): Promise<void>;
}

/**
 * Starts Portcullis as `services` says (all-in-one today; see `runnableParts`): load and validate
 * the config (an invalid first config throws, as there is nothing to keep serving), then start
 * each listed service's part and subscribe it to the reload loop: the authorization state and
 * ext_authz Check (authorize), the xDS snapshot, ADS and a supervised Envoy (proxy), the session
 * store (databroker). ADS and Check share one grpc-js server on `grpc_address`.
 */
export async function startAllInOne(options: AllInOneOptions): Promise<AllInOne> {
  const { logger } = options;
  const store = new SnapshotStore();
  const sessions = new MemorySessionStore();
  const identities = new IdentityResolver(logger);
  const authorize = new AuthorizeService(sessions, logger, identities);
  // Dropped clusters and route ids stay until every Envoy has ACKed the routes that no longer use them.
  const publisher = new MakeBeforeBreak({
    store,
    logger,
    onSettled: () => authorize.releaseRetiredRoutes(),
  });
  const authenticate = new AuthenticateService(
    sessions,
    identities,
    logger,
    options.idpTimeoutMs === undefined ? {} : { idpTimeoutMs: options.idpTimeoutMs },
  );
  // Envoy reaches Portcullis's own HTTP endpoints at the port after grpc_address's, fixed by the
  // first config (like the gRPC credential), so a restart compiles the same cluster.
  let ownHttp: { host: string; port: number } | undefined;
  const caFile = systemCaFile(options.env);
  const reloader = new Reloader({
    configPath: options.configPath,
    env: options.env,
    translate: (config) => {
      ownHttp ??= ownHttpAddress(splitHostPort(config.grpc_address));
      return { systemCaFile: caFile, internal: authorize.internalFor(config, ownHttp) };
    },
    logger,
    ...(options.reloadSettleMs === undefined ? {} : { settleMs: options.reloadSettleMs }),
  });
  let initial: GoodBuild;
  let parts: ServiceParts;
  try {
    initial = reloader.loadInitial();
    parts = runnableParts(initial.config);
    // The authorization state takes each config before Envoy can route by it.
    if (parts.authorize) reloader.subscribe(authorize.subscriber());
    // Sign-in takes each config's routes and clients before Envoy routes by them.
    if (parts.authenticate) reloader.subscribe(authenticate.subscriber());
    if (parts.proxy) reloader.subscribe(publisher.subscriber());
  } catch (err) {
    reloader.close();
    await authenticate.close();
    throw err;
  }
  // Find Envoy before opening any port, so a missing Envoy fails fast with its instructions.
  const envoy = options.withoutEnvoy === true || !parts.proxy ? undefined : await locateEnvoy(options.env);
  if (logger.level !== undefined) logger.level = initial.config.log_level;
  // Envoy presents this on ADS and Check; the supervised one gets it in its bootstrap.
  const credential = authorize.grpcCredential();
  if (options.withoutEnvoy === true && initial.config.shared_secret === undefined) {
    reloader.close();
    await authenticate.close();
    throw new PortcullisError(
      'SHARED_SECRET_REQUIRED',
      'sidecar mode (--without-envoy) needs shared_secret: the sidecar Envoy presents a gRPC credential derived from it (portcullis grpc-credential --config <file>), and a generated secret would refuse every Envoy',
    );
  }
  const ads = new AdsServer({ source: store, logger, credential });
  ads.onEvent((event) => publisher.observe(event));
  const server = new grpc.Server(grpcServerOptions(credential, logger));
  if (parts.proxy) ads.register(server);
  if (parts.authorize) authorize.register(server);
  const { host, port } = splitHostPort(initial.config.grpc_address);
  if (initial.config.grpc_insecure && !isLoopbackIp(host) && host !== 'localhost') {
    logger.warn(
      { grpc_address: initial.config.grpc_address },
      'grpc_insecure: ADS and ext_authz are served without TLS off loopback; keep the port on a private network',
    );
  }
  let grpcPort: number;
  let supervisor: EnvoySupervisor | undefined;
  try {
    grpcPort = await bindGrpc(server, host, port);
    // After gRPC, so a taken grpc_address is reported as such.
    if (ownHttp !== undefined) await authenticate.listen(ownHttp.host, ownHttp.port);
    logger.info(
      {
        grpc_address: `${host}:${grpcPort}`,
        services: initial.config.services,
        routes: initial.config.routes.length,
        version: initial.snapshot.version,
      },
      'gRPC listening (ADS and ext_authz Check)',
    );
    if (initial.config.authenticate_service_url !== undefined) {
      logger.info(
        {
          authenticate_service_url: initial.config.authenticate_service_url.origin,
          own_http: `${authenticate.endpoint().host}:${authenticate.endpoint().port}`,
        },
        'sign-in served on the authenticate host and /.portcullis/ of every route host (through Envoy)',
      );
    }
    if (envoy !== undefined) {
      supervisor = await superviseEnvoy(envoy, {
        ads: { address: host === '0.0.0.0' ? '127.0.0.1' : host, port: grpcPort, credential },
        adsApiType: options.adsApiType ?? 'DELTA_GRPC',
        adminAddress: initial.config.envoy_admin_address,
        logger,
      });
    }
  } catch (err) {
    ads.close();
    reloader.close();
    server.forceShutdown();
    await authenticate.close();
    throw err;
  }
  return {
    store,
    sessions,
    authorize,
    authenticate,
    reloader,
    ads,
    publisher,
    grpcPort,
    supervisor,
    async stop(stopOptions = {}) {
      reloader.close();
      await supervisor?.stop({ graceMs: stopOptions.graceMs ?? 0 });
      ads.close();
      await Promise.all([shutdownGrpc(server, stopOptions.graceMs ?? 0), authenticate.close()]);
    },
  };
}

/** Starts Envoy from a bootstrap that points it at the ADS server, warning when it is outdated. */
async function superviseEnvoy(
  envoy: LocatedEnvoy,
  options: {
    ads: { address: string; port: number; credential: string };
    adsApiType: AdsApiType;
    adminAddress: string;
    logger: Logger;
  },
): Promise<EnvoySupervisor> {
  const { logger } = options;
  if (envoy.outdated) {
    logger.warn(
      { version: envoy.version },
      'Envoy is older than 1.40.0 and misses security fixes; upgrade it',
    );
  }
  const admin = splitHostPort(options.adminAddress);
  const supervisor = new EnvoySupervisor({
    binary: envoy.path,
    logger,
    bootstrap: buildBootstrap({
      ads: options.ads,
      adsApiType: options.adsApiType,
      admin: { address: admin.host, port: admin.port },
      maxHeapSizeBytes: envoyHeapBudget(),
    }),
  });
  await supervisor.start();
  logger.info({ envoy: envoy.path, version: envoy.version, admin: options.adminAddress }, 'Envoy started');
  return supervisor;
}

/**
 * Binds `server` on `host:port` (0 picks a free port) and resolves with the bound port; a failure
 * is GRPC_BIND_FAILED naming the address, so a taken `grpc_address` says which option to change.
 */
async function bindGrpc(server: grpc.Server, host: string, port: number): Promise<number> {
  const target = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  try {
    return await new Promise<number>((resolve, reject) =>
      server.bindAsync(target, grpc.ServerCredentials.createInsecure(), (err, bound) =>
        err === null ? resolve(bound) : reject(err),
      ),
    );
  } catch (err) {
    throw new PortcullisError(
      'GRPC_BIND_FAILED',
      `cannot listen on grpc_address ${target}: ${errorMessage(err)}`,
    );
  }
}

/** Stops `server`: in-flight calls get `graceMs` to finish, then every connection is closed. */
function shutdownGrpc(server: grpc.Server, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const force = setTimeout(() => server.forceShutdown(), graceMs);
    server.tryShutdown(() => {
      clearTimeout(force);
      resolve();
    });
  });
}

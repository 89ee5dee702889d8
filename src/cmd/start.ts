import * as grpc from '@grpc/grpc-js';
import type { Config } from '../config/types.js';
import { PortcullisError, errorMessage } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { isLoopbackIp } from '../shared/loopback.js';
import { Reloader } from '../runtime/reloader.js';
import { snapshotSubscriber } from '../runtime/subscribers.js';
import { MakeBeforeBreak } from '../xds/publish/make-before-break.js';
import { EnvoyVerdicts } from '../xds/publish/envoy-verdict.js';
import type { CompiledResources } from '../proto/compiled.js';
import type { GoodBuild } from '../runtime/build-pipeline.js';
import { systemCaFile } from '../pki/system-ca.js';
import { AuthorizeService } from '../runtime/authorize-service.js';
import { AuthenticateService } from '../runtime/authenticate-service.js';
import { IdentityResolver } from '../runtime/identity.js';
import { splitHostPort } from '../grpc/address.js';
import { grpcServerOptions } from '../grpc/grpc-limits.js';
import { listenGrpc, type GrpcListener } from '../grpc/grpc-listener.js';
import type { DerivedTls } from '../pki/derived-tls.js';
import { fixAtStart, translateOptionsFor, type FixedAtStart } from '../runtime/translate-options.js';
import { internalCallAuthorizer, internalServerCredentials } from '../grpc/internal-grpc.js';
import { internalClient } from '../grpc/internal-client.js';
import { registerHealth } from '../grpc/grpc-health.js';
import { PortcullisMetrics } from '../observability/metrics/portcullis-metrics.js';
import { Readiness } from '../observability/metrics/readiness.js';
import { serveMetrics } from '../observability/metrics/serve.js';
import { PortcullisTracing } from '../observability/tracing/tracing.js';
import { openSessionStack, type SessionStack } from '../runtime/session-stack.js';
import { registerDatabrokerService } from '../databroker/grpc/service.js';
import { RecordReplayGuard } from '../authenticate/flow/replay-guard.js';
import { AdsServer } from '../xds/server/ads-server.js';
import { SnapshotStore } from '../xds/snapshot/snapshot-store.js';
import { locateEnvoy } from '../envoy/locate.js';
import type { EnvoySupervisor } from '../envoy/supervisor.js';
import type { AdsApiType } from '../envoy/bootstrap.js';
import { servicePartsOf, serviceLabel, type ServiceParts } from './services.js';
import { superviseEnvoy } from './supervise-envoy.js';
import { envoyLogLevel, logLevelSubscriber } from '../observability/log-levels.js';
import { routeGrpcLogging } from '../grpc/grpc-logging.js';

/** Options of the composition root; tests pass their own ports and logger. */
export interface StartOptions {
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
  /** Test seam (Reloader's `afterCompile`): rewrites every build's compiled resources. */
  readonly afterCompile?: (compiled: CompiledResources) => CompiledResources;
}

/** A running Portcullis process: the parts its `services` asked for, and a graceful `stop`. */
export interface Running {
  readonly parts: ServiceParts;
  /** `portcullis`, or `portcullis-<services>` when split: the `service` label of logs and metrics. */
  readonly service: string;
  /** The process logger with `service` bound: every line after start carries it. */
  readonly log: Logger;
  readonly store: SnapshotStore;
  readonly reloader: Reloader;
  /** The credential Envoy presents to ADS and Check, fixed by the first config (see below). */
  readonly grpcCredential: string;
  /** The gRPC port (0 when this process serves no gRPC: authenticate alone). */
  readonly grpcPort: number;
  readonly stack: SessionStack | undefined;
  readonly authorize: AuthorizeService | undefined;
  readonly authenticate: AuthenticateService | undefined;
  readonly ads: AdsServer | undefined;
  readonly publisher: MakeBeforeBreak | undefined;
  readonly supervisor: EnvoySupervisor | undefined;
  stop(options?: { graceMs?: number }): Promise<void>;
}

/**
 * Starts Portcullis as `services` says: loads and validates the config (an invalid first config
 * throws: there is nothing to keep serving), then starts each listed service and subscribes it to
 * the reload loop:
 * - databroker: the record store (memory or Redis), served over gRPC to the other processes;
 * - authorize: the authorization state and ext_authz Check, with the gRPC health service;
 * - authenticate: the HTTP endpoints (sign-in, sign-out, user page) and the session refresher;
 * - proxy: the xDS snapshot, ADS and (unless sidecar) the supervised Envoy.
 * Services in this process share one session store and one gRPC server on `grpc_address`;
 * services elsewhere are reached at their `*_service_url`. Envoy's credential and the derived TLS
 * come from the first config and stay for the life of the process (Envoy's bootstrap carries them).
 */
export async function startServices(options: StartOptions): Promise<Running> {
  const { logger } = options;
  const store = new SnapshotStore();
  const metrics = new PortcullisMetrics();
  // Follows each build's tracing settings: a subscriber from the first load on, so it is set up
  // before anything is served and the first load is traced too; closed last (below).
  const tracing = new PortcullisTracing(logger);
  const identities = new IdentityResolver(logger);
  let first: FixedAtStart | undefined;
  // Envoy's verdict on each reload (ADS events feed it once ADS runs; without ADS: no Envoy).
  const verdicts = new EnvoyVerdicts();
  const caFile = systemCaFile(options.env);
  const reloader = new Reloader({
    configPath: options.configPath,
    env: options.env,
    translate: (config) => {
      const identity = identities.resolve(config);
      const fixed = first as FixedAtStart; // set by `prepare` before the first translate
      if (fixed.credentialDerived && identity.grpcCredential !== fixed.credential) {
        logger.warn(
          {},
          'shared_secret changed: Envoy keeps the gRPC credential derived at start; restart Portcullis (and a sidecar Envoy) to change it',
        );
      }
      return translateOptionsFor(config, identity, fixed, caFile);
    },
    logger,
    ...(options.reloadSettleMs === undefined ? {} : { settleMs: options.reloadSettleMs }),
    subscribers: [tracing.subscriber()],
    envoyVerdict: (snapshot) => verdicts.verdictOn(snapshot),
    ...(options.afterCompile === undefined ? {} : { afterCompile: options.afterCompile }),
    onReload: (result, seconds) => {
      metrics.reloaded(result, seconds);
      tracing.reloaded(result, seconds);
    },
  });
  // Fixed by the first config (see the doc comment); the translate hook reads them.
  const initial = await reloader.loadInitialPrepared(async (config) => {
    const runs = servicePartsOf(config.services);
    const selfContained = options.withoutEnvoy !== true && runs.proxy && runs.authorize;
    first ??= await fixAtStart(config, identities.resolve(config), selfContained);
  });
  const config = initial.config;
  const parts = servicePartsOf(config.services);
  const service = serviceLabel(config.services);
  const log = logger.child({ service });
  metrics.setService(service);
  if (logger.level !== undefined) logger.level = config.log_level;
  routeGrpcLogging(logger, config.log_level);
  const closers: Closer[] = [() => tracing.close(), () => reloader.close(), () => verdicts.close()];
  try {
    return await startParts({
      options,
      log,
      reloader,
      identities,
      store,
      initial,
      parts,
      service,
      metrics,
      tracing,
      verdicts,
      first: first!,
      closers,
    });
  } catch (err) {
    await closeAll(closers, 0);
    throw err;
  }
}

interface PartsContext {
  readonly options: StartOptions;
  readonly log: Logger;
  readonly reloader: Reloader;
  readonly identities: IdentityResolver;
  readonly store: SnapshotStore;
  readonly initial: GoodBuild;
  readonly parts: ServiceParts;
  readonly service: string;
  /** The process's series and its Telemetry (the services report through it). */
  readonly metrics: PortcullisMetrics;
  /** Portcullis's spans (Check, sign-in callback, reload); its tracer follows the current config. */
  readonly tracing: PortcullisTracing;
  /** Envoy's verdict on each reload, fed by ADS events. */
  readonly verdicts: EnvoyVerdicts;
  readonly first: FixedAtStart;
  /** Stops what was started, in reverse order (on a failed start and in `stop`). */
  readonly closers: Closer[];
}

/** Stops one started part; `graceMs` is how long in-flight work may take. */
type Closer = (graceMs: number) => Promise<void> | void;

/** Runs `closers` last first (each failure is ignored: stopping goes on). */
async function closeAll(closers: readonly Closer[], graceMs: number): Promise<void> {
  for (const close of [...closers].reverse()) await Promise.resolve(close(graceMs)).catch(() => undefined);
}

async function startParts(context: PartsContext): Promise<Running> {
  const { options, log, reloader, identities, store, initial, parts, first, closers } = context;
  const { metrics, tracing } = context;
  const config = initial.config;
  const sharedSecret = identities.resolve(config).sharedSecret;
  const client = internalClient(sharedSecret, first.tls, config.certificate_authority_pem);
  const usesSessions = parts.authorize || parts.authenticate || parts.databroker;
  const stack = usesSessions
    ? await openSessionStack({
        config,
        runsDatabroker: parts.databroker,
        sharedSecret,
        internal: client,
        logger: log,
        telemetry: metrics,
      })
    : undefined;
  if (stack !== undefined) closers.push(() => stack.close());
  const authorize = parts.authorize ? new AuthorizeService(stack!.sessions, log, identities) : undefined;
  const authenticate = parts.authenticate
    ? new AuthenticateService(stack!.sessions, identities, log, {
        ...(options.idpTimeoutMs === undefined ? {} : { idpTimeoutMs: options.idpTimeoutMs }),
        replay: new RecordReplayGuard(stack!.backend, Date.now),
        lease: stack!.backend,
        telemetry: metrics,
        tracer: tracing.tracer,
        ...(first.tls === undefined ? {} : { tls: { certPem: first.tls.certPem, keyPem: first.tls.keyPem } }),
      })
    : undefined;
  if (authenticate !== undefined) closers.push(() => authenticate.close());
  // Dropped clusters and route ids stay until every Envoy has ACKed the routes that no longer use them.
  const publisher = parts.proxy
    ? new MakeBeforeBreak({ store, logger: log, onSettled: () => authorize?.releaseRetiredRoutes() })
    : undefined;
  // The authorization state takes each config before Envoy can route by it, and so does sign-in.
  if (authorize !== undefined) reloader.subscribe(authorize.subscriber());
  if (authenticate !== undefined) reloader.subscribe(authenticate.subscriber());
  if (publisher !== undefined) reloader.subscribe(snapshotSubscriber(publisher));
  const envoy = options.withoutEnvoy === true || !parts.proxy ? undefined : await locateEnvoy(options.env);
  if (options.withoutEnvoy === true && config.shared_secret === undefined) {
    throw new PortcullisError(
      'SHARED_SECRET_REQUIRED',
      'sidecar mode (--without-envoy) needs shared_secret: the sidecar Envoy presents a gRPC credential derived from it (portcullis grpc-credential --config <file>), and a generated secret would refuse every Envoy',
    );
  }
  const ads = parts.proxy
    ? new AdsServer({ source: store, logger: log, credential: first.credential })
    : undefined;
  ads?.onEvent((event) => publisher?.observe(event));
  ads?.onEvent((event) => context.verdicts.observe(event));
  // Ready once an Envoy ACKed a config (where this process serves xDS) and the session store answers.
  const readiness = new Readiness({
    envoy: parts.proxy,
    ...(stack === undefined ? {} : { store: stack.backend }),
  });
  closers.push(() => readiness.close());
  ads?.onEvent((event) => readiness.observe(event));
  if (ads !== undefined) metrics.watchAds(() => ads.stats());
  const { host, port } = splitHostPort(config.grpc_address);
  let grpcPort = 0;
  if (parts.proxy || parts.authorize || parts.databroker) {
    const server = new grpc.Server(
      grpcServerOptions({
        envoyCredential: first.credential,
        internalSecret: () => sharedSecret,
        logger: log,
      }),
    );
    const health = registerHealth(server);
    if (ads !== undefined) ads.register(server);
    if (authorize !== undefined) authorize.register(server, first.credential, metrics, tracing.tracer);
    const databroker =
      parts.databroker && stack !== undefined
        ? registerDatabrokerService(server, stack.backend, {
            authorize: internalCallAuthorizer(() => sharedSecret, 'databroker'),
            logger: log,
          })
        : undefined;
    warnInsecureGrpc(config, host, log);
    // Closed last-pushed first: ADS and Watch streams never end by themselves, so they are ended
    // before the server drains its calls.
    closers.push((graceMs) => shutdownGrpc(server, graceMs));
    closers.push(() => ads?.close());
    closers.push(() => databroker?.close());
    const listener = await bindGrpc(server, host, port, first.tls, log);
    // Before everything above: no new connection once stopping begins.
    closers.push(() => listener.close());
    grpcPort = listener.port;
    health.set('', readiness.serving);
    readiness.onChange((serving) => health.set('', serving));
    log.info(
      {
        grpc_address: `${host}:${grpcPort}`,
        tls: first.tls === undefined ? 'none' : `derived (${first.tls.serverName})`,
        serves: [
          ...(parts.proxy ? ['ADS'] : []),
          ...(parts.authorize ? ['ext_authz Check'] : []),
          ...(parts.databroker ? ['databroker'] : []),
          'health',
        ],
        routes: config.routes.length,
        version: initial.snapshot.version,
      },
      `gRPC listening on ${host.includes(':') ? `[${host}]` : host}:${grpcPort}`,
    );
  }
  if (authenticate !== undefined) {
    // After gRPC, so a taken grpc_address is reported as such.
    const bound = await authenticate.listen(first.ownHttp.host, first.ownHttp.port);
    const url = `${first.tls === undefined ? 'http' : 'https'}://${bound.host}:${bound.port}`;
    log.info(
      {
        reached: 'through Envoy on the authenticate host and /.portcullis/ of every route host',
        ...(config.authenticate_service_url === undefined
          ? {}
          : { authenticate_service_url: config.authenticate_service_url.origin }),
      },
      `sign-in endpoints listening on ${url}`,
    );
  }
  let supervisor: EnvoySupervisor | undefined;
  if (envoy !== undefined) {
    supervisor = await superviseEnvoy(envoy, {
      ads: {
        address: host === '0.0.0.0' || host === '' ? '127.0.0.1' : host,
        port: grpcPort,
        credential: first.credential,
        ...(first.tls === undefined
          ? {}
          : { tls: { caPem: first.tls.caPem, serverName: first.tls.serverName } }),
      },
      adsApiType: options.adsApiType ?? 'DELTA_GRPC',
      adminAddress: config.envoy_admin_address,
      logLevel: envoyLogLevel(config),
      capSensitiveComponents: config.proxy_log_level === undefined,
      logger: log,
    });
    const started = supervisor;
    closers.push((graceMs) => started.stop({ graceMs }));
  }
  reloader.subscribe(logLevelSubscriber(options.logger, supervisor, log));
  const metricsServer = await serveMetrics({
    config,
    current: () => reloader.lastGoodBuild()?.config ?? config,
    metrics,
    readiness,
    proxy: parts.proxy,
    envoyAdminUrl: () => supervisor?.adminUrl,
    logger: log,
  });
  if (metricsServer !== undefined) closers.push(() => metricsServer.close());
  return {
    parts,
    service: context.service,
    log,
    store,
    reloader,
    grpcCredential: first.credential,
    grpcPort,
    stack,
    authorize,
    authenticate,
    ads,
    publisher,
    supervisor,
    async stop(stopOptions = {}) {
      await closeAll(closers, stopOptions.graceMs ?? 0);
    },
  };
}

function warnInsecureGrpc(config: Config, host: string, logger: Logger): void {
  if (
    config.grpc_insecure &&
    config.tls_derive === undefined &&
    !isLoopbackIp(host) &&
    host !== 'localhost'
  ) {
    logger.warn(
      { grpc_address: config.grpc_address },
      'grpc_insecure: gRPC is served without TLS off loopback; keep the port on a private network (or set tls_derive)',
    );
  }
}

/**
 * Listens on `host:port` (0 picks a free port) for `server` through grpc-listener.ts (connections
 * bounded per peer and overall), with the derived TLS when `tls_derive` is set; a failure is
 * GRPC_BIND_FAILED naming the address, so a taken `grpc_address` says which option to change.
 */
async function bindGrpc(
  server: grpc.Server,
  host: string,
  port: number,
  tls: DerivedTls | undefined,
  logger: Logger,
): Promise<GrpcListener> {
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
function shutdownGrpc(server: grpc.Server, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const force = setTimeout(() => server.forceShutdown(), graceMs);
    server.tryShutdown(() => {
      clearTimeout(force);
      resolve();
    });
  });
}

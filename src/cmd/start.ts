import * as grpc from '@grpc/grpc-js';
import { randomGrpcCredential } from '../contract/grpc-credential.js';
import { PortcullisError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { Reloader } from '../runtime/reloader.js';
import type { PublishedBuild } from '../runtime/subscribers.js';
import type { CompiledResources } from '../proto/compiled.js';
import { systemCaFile } from '../pki/system-ca.js';
import type { PinnedAtStart, PushedDocument } from '../translate/from-file.js';
import { grpcServerOptions } from '../grpc/grpc-limits.js';
import { internalClient } from '../grpc/internal-client.js';
import { registerHealth } from '../grpc/grpc-health.js';
import { routeGrpcLogging } from '../grpc/grpc-logging.js';
import { EnvoyVerdicts } from '../xds/publish/envoy-verdict.js';
import type { MakeBeforeBreak } from '../xds/publish/make-before-break.js';
import type { AdsServer } from '../xds/server/ads-server.js';
import { SnapshotStore } from '../xds/snapshot/snapshot-store.js';
import type { RevocationFeed } from '../xds/fast-path-revocations.js';
import type { AuthorizeService } from '../authorize/service.js';
import type { AuthenticateService } from '../authenticate/service.js';
import { openSessionStack, type SessionStack } from '../databroker/stack.js';
import type { EnvoySupervisor } from '../envoy/supervisor.js';
import type { AdsApiType } from '../envoy/bootstrap.js';
import { PortcullisMetrics } from '../observability/metrics/portcullis-metrics.js';
import type { WaitingMetricsServer } from '../observability/metrics/metrics-server.js';
import { PortcullisTracing } from '../observability/tracing/tracing.js';
import { servicePartsOf, type ServiceParts } from './services.js';
import {
  SERVICE_STARTS,
  START_ORDER,
  type Closer,
  type FixedAtStart,
  type ProcessParts,
} from './service-table.js';
import { listenAndSupervise } from './listen.js';
import { proxyNeedsSessions, startRevocationFeed } from './revocation-feed.js';
import { shutdownGrpc } from './grpc-server.js';

/** Options of the composition root; tests pass their own ports and logger. */
export interface StartOptions {
  /** The config file; with `document`, the name of the config source (logs and errors). */
  readonly configPath: string;
  /**
   * The first document of a config source that pushes them (`portcullis kubernetes`), built
   * instead of a file; later ones go through `reloader.pushDocument`.
   */
  readonly document?: PushedDocument;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger & { level?: string };
  /** Delta (default) or state-of-the-world ADS for the supervised Envoy. */
  readonly adsApiType?: AdsApiType;
  /** Start no Envoy (sidecar mode: an Envoy started separately connects over ADS). */
  readonly withoutEnvoy?: boolean;
  /**
   * A metrics server already listening (`portcullis kubernetes`, up while it waits for its
   * settings): the services serve metrics and readiness there instead of on `metrics_address`.
   */
  readonly earlyMetrics?: WaitingMetricsServer;
  /** How long an in-place config write must stay unchanged before it is loaded (Reloader's `settleMs`). */
  readonly reloadSettleMs?: number;
  /** Deadline of each identity-provider call (default 10 s); tests of a slow IdP shorten it. */
  readonly idpTimeoutMs?: number;
  /** Test seam (Reloader's `afterCompile`): rewrites every build's compiled resources, in this thread. */
  readonly afterCompile?: (compiled: CompiledResources) => CompiledResources;
  /**
   * Test seam: the same rewrite from a module (URL; its default export), run in the build worker,
   * so a test of Envoy's verdicts exercises the build as it runs in production.
   */
  readonly afterCompileModule?: string;
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
  /** The session stack where authorize, authenticate or the databroker run. */
  readonly stack: SessionStack | undefined;
  /** The revocation feed where the proxy or authorize runs (see ProcessParts). */
  readonly revocations: RevocationFeed | undefined;
  readonly authorize: AuthorizeService | undefined;
  readonly authenticate: AuthenticateService | undefined;
  readonly ads: AdsServer | undefined;
  readonly publisher: MakeBeforeBreak | undefined;
  readonly supervisor: EnvoySupervisor | undefined;
  stop(options?: { graceMs?: number }): Promise<void>;
}

/**
 * Starts Portcullis as `services` says: loads and validates the config (an invalid first config
 * throws: there is nothing to keep serving), then starts each listed service from the table in
 * service-table.ts, each subscribed to the reload loop (which hands it every build's IR and key
 * ring, never the config):
 * - databroker: the record store (memory or Redis), served over gRPC to the other processes;
 * - authorize: the authorization state and ext_authz Check;
 * - authenticate: the HTTP endpoints (sign-in, sign-out, user page) and the session refresher;
 * - proxy: the xDS snapshot, ADS and (unless sidecar) the supervised Envoy.
 * Services in this process share one session store and one gRPC server on `grpc_address`;
 * services elsewhere are reached at their `*_service_url`. Envoy's credential and the derived TLS
 * come from the first config and stay for the life of the process (Envoy's bootstrap carries them).
 */
export async function startServices(options: StartOptions): Promise<Running> {
  const { logger } = options;
  const metrics = new PortcullisMetrics();
  // Follows each build's tracing settings: a subscriber from the first load on, so it is set up
  // before anything is served and the first load is traced too; closed last (below).
  const tracing = new PortcullisTracing(logger);
  // Envoy's verdict on each reload (ADS events feed it once ADS runs; without ADS: no Envoy).
  const verdicts = new EnvoyVerdicts();
  const caFile = systemCaFile(options.env);
  let pinned: PinnedAtStart | undefined;
  const reloader = new Reloader({
    configPath: options.configPath,
    env: options.env,
    ...(options.document === undefined ? {} : { document: options.document }),
    // The reload loop generates the secrets a config does not set, once for the process's life.
    translate: () => ({ systemCaFile: caFile, ...(pinned === undefined ? {} : { pinned }) }),
    logger,
    ...(options.reloadSettleMs === undefined ? {} : { settleMs: options.reloadSettleMs }),
    subscribers: [tracing.subscriber()],
    envoyVerdict: (snapshot) => verdicts.verdictOn(snapshot),
    ...(options.afterCompile === undefined ? {} : { afterCompile: options.afterCompile }),
    // Every build off the main thread, so no Check, sign-in or ADS answer waits for one (the
    // afterCompile test seam, a function, builds in this thread).
    worker:
      options.afterCompileModule === undefined ? true : { afterCompileModule: options.afterCompileModule },
    onReload: (result, seconds) => {
      metrics.reloaded(result, seconds);
      tracing.reloaded(result, seconds);
    },
  });
  const closers: Closer[] = [() => tracing.close(), () => reloader.close(), () => verdicts.close()];
  try {
    const initial = await reloader.start();
    pinned = { ownHttp: initial.ir.process.ownHttp, internalTls: initial.keys.internalTls };
    return await startParts(options, { reloader, initial, metrics, tracing, verdicts, closers });
  } catch (err) {
    await closeAll(closers, 0);
    throw err;
  }
}

/** What `startServices` made before the services start. */
interface Prepared {
  readonly reloader: Reloader;
  readonly initial: PublishedBuild;
  readonly metrics: PortcullisMetrics;
  readonly tracing: PortcullisTracing;
  readonly verdicts: EnvoyVerdicts;
  readonly closers: Closer[];
}

/** Runs `closers` last first (each failure is ignored: stopping goes on). */
async function closeAll(closers: readonly Closer[], graceMs: number): Promise<void> {
  for (const close of [...closers].reverse()) await Promise.resolve(close(graceMs)).catch(() => undefined);
}

async function startParts(options: StartOptions, prepared: Prepared): Promise<Running> {
  const { reloader, initial, metrics, tracing, closers } = prepared;
  const { process: processIr, observability } = initial.ir;
  const parts = servicePartsOf(processIr.services);
  const service = processIr.serviceLabel;
  const log = options.logger.child({ service });
  metrics.setService(service);
  if (options.logger.level !== undefined) options.logger.level = observability.logLevel;
  routeGrpcLogging(options.logger, observability.logLevel);
  const keys = initial.keys;
  warnGeneratedSecrets(keys.generated, parts, log);
  if (options.withoutEnvoy === true && keys.generated.sharedSecret) {
    throw new PortcullisError(
      'SHARED_SECRET_REQUIRED',
      'sidecar mode (--without-envoy) needs shared_secret: the sidecar Envoy presents a gRPC credential derived from it (portcullis grpc-credential --config <file>), and a generated secret would refuse every Envoy',
    );
  }
  const fixed = fixAtStart(initial, options.withoutEnvoy !== true && parts.proxy && parts.authorize);
  if (fixed.credentialDerived) reloader.subscribe(credentialWatch(fixed.credential, log));
  const client = internalClient(keys.sharedSecret, fixed.tls, processIr.certificateAuthorityPem);
  const servesSessions = parts.authorize || parts.authenticate || parts.databroker;
  const stack =
    servesSessions || proxyNeedsSessions(parts, initial.ir)
      ? await openSessionStack({
          databroker: processIr.databroker,
          connection: keys.databrokerConnection,
          clientTimeoutMs: processIr.grpcClientTimeoutMs,
          runsDatabroker: parts.databroker,
          sharedSecret: keys.sharedSecret,
          internal: client,
          logger: log,
          telemetry: metrics,
        })
      : undefined;
  if (stack !== undefined) closers.push(() => stack.close());
  const grpcServer =
    parts.proxy || parts.authorize || parts.databroker
      ? new grpc.Server(
          grpcServerOptions({
            envoyCredential: fixed.credential,
            internalSecret: () => keys.sharedSecret,
            logger: log,
          }),
        )
      : undefined;
  const health = grpcServer === undefined ? undefined : registerHealth(grpcServer);
  // Pushed before the services' own closers, so ADS and Watch streams end before the server drains.
  if (grpcServer !== undefined) closers.push((graceMs) => shutdownGrpc(grpcServer, graceMs));
  const store = new SnapshotStore();
  const revocations = startRevocationFeed({
    parts,
    stack,
    store,
    reloader,
    initial: initial.ir,
    logger: log,
    closers,
  });
  const processParts: ProcessParts = {
    log,
    reloader,
    fixed,
    sharedSecret: keys.sharedSecret,
    metrics,
    tracing,
    store,
    // A proxy's stack serves only its revocation feed: not a session service (readiness, `stack`).
    stack: servesSessions ? stack : undefined,
    revocations,
    grpcServer,
    idpTimeoutMs: options.idpTimeoutMs,
    closers,
    started: {},
  };
  for (const name of START_ORDER) if (processIr.services.includes(name)) SERVICE_STARTS[name](processParts);
  const listening = await listenAndSupervise(options, {
    ...prepared,
    process: processParts,
    parts,
    health,
  });
  const { started } = processParts;
  return {
    parts,
    service,
    log,
    store: processParts.store,
    reloader,
    revocations,
    grpcCredential: fixed.credential,
    grpcPort: listening.grpcPort,
    stack: processParts.stack,
    authorize: started.authorize,
    authenticate: started.authenticate?.service,
    ads: started.xds?.ads,
    publisher: started.xds?.publisher,
    supervisor: listening.supervisor,
    async stop(stopOptions = {}) {
      await closeAll(closers, stopOptions.graceMs ?? 0);
    },
  };
}

/**
 * What the first build fixes. `selfContained`: this process both checks the gRPC credential
 * (authorize and proxy) and starts the only Envoy that presents it (all-in-one), so the credential
 * is random, new with every start, rather than derived from `shared_secret` (which a sidecar Envoy
 * or another process must share).
 */
function fixAtStart(initial: PublishedBuild, selfContained: boolean): FixedAtStart {
  return {
    credential: selfContained ? randomGrpcCredential() : initial.keys.grpcCredential,
    credentialDerived: !selfContained,
    ownHttp: initial.ir.process.ownHttp,
    tls: initial.keys.internalTls,
  };
}

/** Warns once, at start, about secrets the process generated because the config sets none. */
function warnGeneratedSecrets(
  generated: PublishedBuild['keys']['generated'],
  parts: ServiceParts,
  log: Logger,
): void {
  if (generated.sharedSecret) {
    log.warn(
      {},
      'shared_secret is not set: generated one for this process; sessions and identity-assertion keys change on restart',
    );
  }
  if (generated.cookieSecret && parts.authenticate) {
    log.warn(
      {},
      'cookie_secret is not set: generated one for this process; sign-ins in progress fail after a restart',
    );
  }
}

/** Warns when a reload changes the shared secret a derived Envoy credential came from. */
function credentialWatch(credential: string, log: Logger): Parameters<Reloader['subscribe']>[0] {
  return {
    name: 'grpc-credential',
    publish: (build) => {
      if (build.keys.grpcCredential === credential) return;
      log.warn(
        {},
        'shared_secret changed: Envoy keeps the gRPC credential derived at start; restart Portcullis (and a sidecar Envoy) to change it',
      );
    },
  };
}

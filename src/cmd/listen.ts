import type { PublishedBuild } from '../runtime/subscribers.js';
import type { Reloader } from '../runtime/reloader.js';
import type { HealthStatus } from '../grpc/grpc-health.js';
import type { EnvoyVerdicts } from '../xds/publish/envoy-verdict.js';
import { locateEnvoy } from '../envoy/locate.js';
import type { EnvoySupervisor } from '../envoy/supervisor.js';
import type { PortcullisMetrics } from '../observability/metrics/portcullis-metrics.js';
import { Readiness } from '../observability/metrics/readiness.js';
import { serveMetrics } from '../observability/metrics/serve.js';
import type { WaitingMetricsServer } from '../observability/metrics/metrics-server.js';
import { envoyLogLevel, logLevelSubscriber } from '../observability/log-levels.js';
import { templatedHeaderNames } from '../ir/header-templates.js';
import type { ServiceParts } from './services.js';
import type { ProcessParts } from './service-table.js';
import type { AdsApiType } from '../envoy/bootstrap.js';
import type { LevelledLogger } from '../observability/log-levels.js';
import { superviseEnvoy } from './supervise-envoy.js';
import { bindGrpc, warnInsecureGrpc } from './grpc-server.js';

/** The start options listening reads (StartOptions' fields). */
interface ListenOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: LevelledLogger;
  readonly adsApiType?: AdsApiType;
  readonly withoutEnvoy?: boolean;
  readonly earlyMetrics?: WaitingMetricsServer;
}

/** What the services started with, and what listening needs besides. */
interface ListenContext {
  readonly reloader: Reloader;
  readonly initial: PublishedBuild;
  readonly metrics: PortcullisMetrics;
  readonly verdicts: EnvoyVerdicts;
  readonly process: ProcessParts;
  readonly parts: ServiceParts;
  readonly health: HealthStatus | undefined;
}

/**
 * Once every service has started: readiness (an Envoy ACKed a config where this process serves
 * xDS, and the session store answers), the gRPC listener, then the sign-in endpoints (after gRPC,
 * so a taken `grpc_address` is reported as such), the supervised Envoy (unless sidecar), log levels
 * that follow reloads, and the metrics listener. Each logs what it listens on.
 */
export async function listenAndSupervise(
  options: ListenOptions,
  context: ListenContext,
): Promise<{ readonly grpcPort: number; readonly supervisor: EnvoySupervisor | undefined }> {
  const { reloader, initial, metrics, process, parts } = context;
  const { log, closers, fixed, started, grpcServer, stack } = process;
  const processIr = initial.ir.process;
  const envoy = options.withoutEnvoy === true || !parts.proxy ? undefined : await locateEnvoy(options.env);
  const ads = started.xds?.ads;
  ads?.onEvent((event) => context.verdicts.observe(event));
  const readiness = new Readiness({
    envoy: parts.proxy,
    ...(stack === undefined ? {} : { store: stack.backend }),
  });
  closers.push(() => readiness.close());
  ads?.onEvent((event) => readiness.observe(event));
  if (ads !== undefined) metrics.watchAds(() => ads.stats());
  let grpcPort = 0;
  if (grpcServer !== undefined) {
    warnInsecureGrpc(processIr, log);
    const listener = await bindGrpc(grpcServer, processIr.grpc, fixed.tls, log);
    // Before everything above: no new connection once stopping begins.
    closers.push(() => listener.close());
    grpcPort = listener.port;
    const { host } = processIr.grpc;
    context.health?.set('', readiness.serving);
    readiness.onChange((serving) => context.health?.set('', serving));
    log.info(
      {
        grpc_address: `${host}:${grpcPort}`,
        tls: fixed.tls === undefined ? 'none' : `derived (${fixed.tls.serverName})`,
        serves: [
          ...(parts.proxy ? ['ADS'] : []),
          ...(parts.authorize ? ['ext_authz Check'] : []),
          ...(parts.databroker ? ['databroker'] : []),
          'health',
        ],
        routes: processIr.routeCount,
        version: initial.snapshot.version,
      },
      `gRPC listening on ${host.includes(':') ? `[${host}]` : host}:${grpcPort}`,
    );
  }
  if (started.authenticate !== undefined) {
    const bound = await started.authenticate.listen(fixed.ownHttp);
    const url = `${fixed.tls === undefined ? 'http' : 'https'}://${bound.host}:${bound.port}`;
    log.info(
      {
        reached: 'through Envoy on the authenticate host and /.portcullis/ of every route host',
        ...(processIr.authenticateOrigin === undefined
          ? {}
          : { authenticate_service_url: processIr.authenticateOrigin }),
      },
      `sign-in endpoints listening on ${url}`,
    );
  }
  let supervisor: EnvoySupervisor | undefined;
  if (envoy !== undefined) {
    const { host } = processIr.grpc;
    supervisor = await superviseEnvoy(envoy, {
      ads: {
        address: host === '0.0.0.0' || host === '' ? '127.0.0.1' : host,
        port: grpcPort,
        credential: fixed.credential,
        ...(fixed.tls === undefined
          ? {}
          : { tls: { caPem: fixed.tls.caPem, serverName: fixed.tls.serverName } }),
      },
      adsApiType: options.adsApiType ?? 'DELTA_GRPC',
      adminAddress: processIr.envoyAdminAddress,
      logLevel: envoyLogLevel(initial.ir.observability),
      capSensitiveComponents: initial.ir.observability.proxyLogLevel === undefined,
      logger: log,
    });
    const running = supervisor;
    closers.push((graceMs) => running.stop({ graceMs }));
    reloader.subscribe({
      name: 'envoy-log-redaction',
      publish: ({ ir }) => running.redactHeaders(templatedHeaderNames(ir)),
    });
  }
  reloader.subscribe(logLevelSubscriber(options.logger, supervisor, log));
  const metricsServer = await serveMetrics({
    observability: initial.ir.observability,
    envoyAdminAddress: processIr.envoyAdminAddress,
    basicAuth: () => (reloader.lastGoodBuild() ?? initial).keys.metricsBasicAuth,
    metrics,
    readiness,
    proxy: parts.proxy,
    envoyAdminUrl: () => supervisor?.adminUrl,
    logger: log,
    ...(options.earlyMetrics === undefined ? {} : { early: options.earlyMetrics }),
  });
  if (metricsServer !== undefined) closers.push(() => metricsServer.close());
  return { grpcPort, supervisor };
}

import type { IRObservability } from '../../ir/services.js';
import type { Secret } from '../../shared/secret.js';
import { adminUrlFromAddress } from '../../envoy/admin.js';
import type { Logger } from '../../shared/logger.js';
import { splitHostPort } from '../../shared/address.js';
import {
  startMetricsServer,
  type MetricsServer,
  type MetricsSources,
  type WaitingMetricsServer,
} from './metrics-server.js';
import type { PortcullisMetrics } from './portcullis-metrics.js';
import type { Readiness } from './readiness.js';

/**
 * Starts the metrics and health server on the first build's `metrics_address` (undefined when
 * unset: nothing listens), with Node's process metrics, and logs its URLs. The address is fixed for
 * the life of the process like `grpc_address`; `metrics_basic_auth` is read from the current key
 * ring at each scrape, so a reload changes it. Envoy's stats come from `envoyAdminUrl()` when it gives
 * one (the supervised Envoy), else from `envoy_admin_address` where this process serves xDS (a
 * sidecar whose admin listens there). Rejects with METRICS_BIND_FAILED when the address is taken.
 * Given `early` (a server already listening while the process waited for its settings), it serves
 * there instead of binding: that address stays, and a `metrics_address` naming another (or none)
 * is logged as overridden.
 */
export async function serveMetrics(options: {
  /** The first build's observability settings. */
  readonly observability: IRObservability;
  /** `envoy_admin_address`. */
  readonly envoyAdminAddress: string;
  /** `metrics_basic_auth` of the build serving now (reloads change it). */
  readonly basicAuth: () => Secret<string> | undefined;
  readonly metrics: PortcullisMetrics;
  readonly readiness: Readiness;
  /** Whether this process serves xDS (so it has an Envoy whose stats belong beside its own). */
  readonly proxy: boolean;
  readonly envoyAdminUrl: () => string | undefined;
  readonly logger: Logger;
  /** A server listening since before the settings existed (`portcullis kubernetes`). */
  readonly early?: WaitingMetricsServer;
}): Promise<MetricsServer | undefined> {
  const { observability, metrics, logger, early } = options;
  if (observability.metricsAddress === undefined && early === undefined) return undefined;
  metrics.collectProcessMetrics();
  const configuredAdmin = options.proxy
    ? adminUrlFromAddress(loopbackFor(options.envoyAdminAddress))
    : undefined;
  const sources: MetricsSources = {
    metrics,
    readiness: options.readiness,
    envoyAdminUrl: () => (options.proxy ? (options.envoyAdminUrl() ?? configuredAdmin) : undefined),
    basicAuth: options.basicAuth,
  };
  let server: MetricsServer;
  if (early === undefined) {
    const { host, port } = splitHostPort(observability.metricsAddress as string);
    server = await startMetricsServer({ host, port, ...sources });
  } else {
    early.serve(sources);
    server = early;
    const startedOn = `${early.host.includes(':') ? `[${early.host}]` : early.host}:${early.port}`;
    if (!sameAddress(observability.metricsAddress, early)) {
      logger.warn(
        { metrics_address: observability.metricsAddress ?? '(unset)', listening_on: startedOn },
        `metrics_address is overridden: the metrics listener started on ${startedOn} before the settings existed and stays there`,
      );
    }
  }
  const { host } = server;
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host;
  const shown = `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${server.port}`;
  logger.info(
    { basic_auth: observability.metricsBasicAuth },
    `metrics listening on ${shown}/metrics (health: ${shown}/healthz, readiness: ${shown}/readyz)`,
  );
  return server;
}

/** `envoy_admin_address` with a wildcard host replaced by loopback (where this process reaches it). */
function loopbackFor(address: string): string {
  const { host, port } = splitHostPort(address);
  return host === '' || host === '0.0.0.0' || host === '::' ? `127.0.0.1:${port}` : address;
}

/** Whether `address` (`metrics_address`) names where `server` listens (port 0 matches any port). */
function sameAddress(address: string | undefined, server: MetricsServer): boolean {
  if (address === undefined) return false;
  const { host, port } = splitHostPort(address);
  return host === server.host && (port === 0 || port === server.port);
}

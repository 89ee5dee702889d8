import type { IRObservability } from '../../ir/services.js';
import type { Secret } from '../../shared/secret.js';
import { adminUrlFromAddress } from '../../envoy/admin.js';
import type { Logger } from '../../shared/logger.js';
import { splitHostPort } from '../../shared/address.js';
import { startMetricsServer, type MetricsServer } from './metrics-server.js';
import type { PortcullisMetrics } from './portcullis-metrics.js';
import type { Readiness } from './readiness.js';

/**
 * Starts the metrics and health server on the first build's `metrics_address` (undefined when
 * unset: nothing listens), with Node's process metrics, and logs its URLs. The address is fixed for
 * the life of the process like `grpc_address`; `metrics_basic_auth` is read from the current key
 * ring at each scrape, so a reload changes it. Envoy's stats come from `envoyAdminUrl()` when it gives
 * one (the supervised Envoy), else from `envoy_admin_address` where this process serves xDS (a
 * sidecar whose admin listens there). Rejects with METRICS_BIND_FAILED when the address is taken.
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
}): Promise<MetricsServer | undefined> {
  const { observability, metrics, logger } = options;
  if (observability.metricsAddress === undefined) return undefined;
  const { host, port } = splitHostPort(observability.metricsAddress);
  metrics.collectProcessMetrics();
  const configuredAdmin = options.proxy
    ? adminUrlFromAddress(loopbackFor(options.envoyAdminAddress))
    : undefined;
  const server = await startMetricsServer({
    host,
    port,
    metrics,
    readiness: options.readiness,
    envoyAdminUrl: () => (options.proxy ? (options.envoyAdminUrl() ?? configuredAdmin) : undefined),
    basicAuth: options.basicAuth,
  });
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

import type { Config } from '../../config/types.js';
import { adminUrlFromAddress } from '../../envoy/admin.js';
import type { Logger } from '../../shared/logger.js';
import { splitHostPort } from '../../grpc/address.js';
import { startMetricsServer, type MetricsServer } from './metrics-server.js';
import type { PortcullisMetrics } from './portcullis-metrics.js';
import type { Readiness } from './readiness.js';

/**
 * Starts the metrics and health server on the first config's `metrics_address` (undefined when
 * unset: nothing listens), with Node's process metrics, and logs its URLs. The address is fixed for
 * the life of the process like `grpc_address`; `metrics_basic_auth` is read from the current config
 * at each scrape, so a reload changes it. Envoy's stats come from `envoyAdminUrl()` when it gives
 * one (the supervised Envoy), else from `envoy_admin_address` where this process serves xDS (a
 * sidecar whose admin listens there). Rejects with METRICS_BIND_FAILED when the address is taken.
 */
export async function serveMetrics(options: {
  readonly config: Config;
  /** The config serving now (reloads change `metrics_basic_auth`). */
  readonly current: () => Config;
  readonly metrics: PortcullisMetrics;
  readonly readiness: Readiness;
  /** Whether this process serves xDS (so it has an Envoy whose stats belong beside its own). */
  readonly proxy: boolean;
  readonly envoyAdminUrl: () => string | undefined;
  readonly logger: Logger;
}): Promise<MetricsServer | undefined> {
  const { config, metrics, logger } = options;
  if (config.metrics_address === undefined) return undefined;
  const { host, port } = splitHostPort(config.metrics_address);
  metrics.collectProcessMetrics();
  const configuredAdmin = options.proxy
    ? adminUrlFromAddress(loopbackFor(config.envoy_admin_address))
    : undefined;
  const server = await startMetricsServer({
    host,
    port,
    metrics,
    readiness: options.readiness,
    envoyAdminUrl: () => (options.proxy ? (options.envoyAdminUrl() ?? configuredAdmin) : undefined),
    basicAuth: () => options.current().metrics_basic_auth,
  });
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host;
  const shown = `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${server.port}`;
  logger.info(
    { basic_auth: config.metrics_basic_auth !== undefined },
    `metrics listening on ${shown}/metrics (health: ${shown}/healthz, readiness: ${shown}/readyz)`,
  );
  return server;
}

/** `envoy_admin_address` with a wildcard host replaced by loopback (where this process reaches it). */
function loopbackFor(address: string): string {
  const { host, port } = splitHostPort(address);
  return host === '' || host === '0.0.0.0' || host === '::' ? `127.0.0.1:${port}` : address;
}

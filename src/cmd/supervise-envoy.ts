import type { Logger } from '../shared/logger.js';
import { splitHostPort } from '../shared/address.js';
import { buildBootstrap, type AdsApiType, type BootstrapOptions } from '../envoy/bootstrap.js';
import type { LocatedEnvoy } from '../envoy/locate.js';
import { EnvoySupervisor } from '../envoy/supervisor.js';
import type { EnvoyLogLevel } from '../envoy/log-lines.js';
import { envoyHeapBudget } from '../envoy/heap-budget.js';

/**
 * Starts the supervised Envoy from a bootstrap that points it at this process's ADS server (over
 * the derived TLS when `ads.tls` is set), warning when the binary is outdated.
 */
export async function superviseEnvoy(
  envoy: LocatedEnvoy,
  options: {
    ads: BootstrapOptions['ads'];
    adsApiType: AdsApiType;
    adminAddress: string;
    /** Envoy's `--log-level` at start (`envoyLogLevel(config)`); reloads change it through admin. */
    logLevel: EnvoyLogLevel;
    /** Keep Envoy's secret-bearing loggers at info at debug (`proxy_log_level` unset). */
    capSensitiveComponents: boolean;
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
    logLevel: options.logLevel,
    capSensitiveComponents: options.capSensitiveComponents,
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

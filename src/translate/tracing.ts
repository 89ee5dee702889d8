import type { Config } from '../config/types.js';
import { serviceLabel } from '../shared/service-names.js';
import type { IRTracing } from '../ir/tracing.js';

/**
 * Config -> Envoy's tracing, as a spread for the IR listener: `{}` when
 * `otel_exporter_otlp_endpoint` is unset (nothing traced, and the compiled listener is unchanged),
 * else `{ tracing }` with the collector's address, the OTLP protocol, `tracing_sampling_rate` as a
 * percentage and the process's `service` label as Envoy's service name. Pure.
 */
export function translateTracing(config: Config, systemCaFile: string): { tracing?: IRTracing } {
  const endpoint = config.otel_exporter_otlp_endpoint;
  if (endpoint === undefined) return {};
  const tls = endpoint.protocol === 'https:';
  return {
    tracing: {
      endpoint: endpoint.origin,
      collector: {
        host: endpoint.hostname.replace(/^\[|\]$/g, ''),
        port: endpoint.port === '' ? (tls ? 443 : 80) : Number(endpoint.port),
        tls,
      },
      protocol: config.otel_exporter_otlp_protocol,
      samplingPercent: config.tracing_sampling_rate * 100,
      serviceName: serviceLabel(config.services),
      systemCaFile,
    },
  };
}

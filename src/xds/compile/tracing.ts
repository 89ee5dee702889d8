import { isIP } from 'node:net';
import type { IRTracing } from '../../ir/tracing.js';
import { durationMs, typed } from '../../proto/codec.js';
import type { Message } from '../../proto/messages.js';
import { TRANSPORT_SOCKET_TLS } from '../../contract/names.js';
import { portcullisCluster } from './ext-authz.js';

/** CDS cluster through which Envoy's OpenTelemetry tracer reaches the collector. */
export const TRACING_CLUSTER = 'portcullis-otel-collector';

/** Envoy's extension name for its OpenTelemetry tracer. */
export const OPENTELEMETRY_TRACER = 'envoy.tracers.opentelemetry';

/** Bound on one export to the collector: a slow collector costs spans, never requests. */
const EXPORT_TIMEOUT_MS = 5000;

/**
 * The connection manager's `tracing`: Envoy's OpenTelemetry tracer exporting OTLP to
 * `TRACING_CLUSTER` (a gRPC service, or `<endpoint>/v1/traces` over HTTP), starting a trace for
 * `samplingPercent` of requests (`random_sampling`). Envoy's decision is the only one: a client's
 * `x-client-trace-id` forces nothing (`client_sampling` 0) and the sampled flag of a client's
 * `traceparent` is ignored (its trace id is kept), so no client can make the edge trace (tested in
 * test/integration/tracing.test.ts). ext_authz Checks (in their gRPC metadata) and forwarded
 * requests carry Envoy's span on, so Portcullis's spans join Envoy's trace and its decision.
 */
export function hcmTracing(
  tracing: IRTracing,
): Message<'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.Tracing'> {
  const exporter: Message<'envoy.config.trace.v3.OpenTelemetryConfig'> =
    tracing.protocol === 'grpc'
      ? {
          grpc_service: {
            envoy_grpc: { cluster_name: TRACING_CLUSTER },
            timeout: durationMs(EXPORT_TIMEOUT_MS),
          },
        }
      : {
          http_service: {
            http_uri: {
              uri: `${tracing.endpoint}/v1/traces`,
              cluster: TRACING_CLUSTER,
              timeout: durationMs(EXPORT_TIMEOUT_MS),
            },
          },
        };
  return {
    // No client forces a trace with `x-client-trace-id`: the rate is the operator's.
    client_sampling: { value: 0 },
    random_sampling: { value: tracing.samplingPercent },
    provider: {
      name: OPENTELEMETRY_TRACER,
      typed_config: typed('envoy.config.trace.v3.OpenTelemetryConfig', {
        ...exporter,
        service_name: tracing.serviceName,
      }),
    },
  };
}

/**
 * The cluster to the collector: HTTP/2 for OTLP/gRPC, HTTP/1.1 for OTLP/HTTP; over TLS for an
 * https endpoint, verified against the system trust store and the endpoint's host (SNI set for a
 * name), offering ALPN `h2` for gRPC (gRPC servers require it over TLS).
 */
export function tracingCluster(tracing: IRTracing): Message<'envoy.config.cluster.v3.Cluster'> {
  const grpc = tracing.protocol === 'grpc';
  const cluster = portcullisCluster(TRACING_CLUSTER, tracing.collector, grpc ? 'http2' : 'http1');
  if (!tracing.collector.tls) return cluster;
  const host = tracing.collector.host;
  const name = isIP(host) === 0;
  const context: Message<'envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext'> = {
    common_tls_context: {
      tls_params: { tls_minimum_protocol_version: 'TLSv1_2' },
      validation_context: {
        trusted_ca: { filename: tracing.systemCaFile },
        match_typed_subject_alt_names: [{ san_type: name ? 'DNS' : 'IP_ADDRESS', matcher: { exact: host } }],
      },
      alpn_protocols: grpc ? ['h2'] : ['http/1.1'],
    },
  };
  if (name) context.sni = host;
  return {
    ...cluster,
    transport_socket: {
      name: TRANSPORT_SOCKET_TLS,
      typed_config: typed('envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', context),
    },
  };
}

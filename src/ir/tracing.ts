/**
 * Envoy's tracing, in Portcullis's own terms: where the OpenTelemetry collector is, how spans
 * reach it and what share of requests is traced. Compile turns it into the connection manager's
 * `tracing` (Envoy's OpenTelemetry tracer) and a cluster to the collector (xds/compile/tracing.ts).
 */
export interface IRTracing {
  /** The collector's origin (`otel_exporter_otlp_endpoint`), such as `http://collector:4317`. */
  readonly endpoint: string;
  /** Host (IPv6 without brackets), port (the scheme's default when absent) and TLS of `endpoint`. */
  readonly collector: { readonly host: string; readonly port: number; readonly tls: boolean };
  /** OTLP over gRPC, or protobuf over HTTP to `<endpoint>/v1/traces`. */
  readonly protocol: 'grpc' | 'http/protobuf';
  /** Share of requests Envoy starts a trace for, in percent (`tracing_sampling_rate` x 100). */
  readonly samplingPercent: number;
  /** `service.name` of Envoy's spans: the process's `service` label. */
  readonly serviceName: string;
  /** The system trust store (PEM file), against which an https collector is verified. */
  readonly systemCaFile: string;
}

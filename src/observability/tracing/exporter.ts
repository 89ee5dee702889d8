import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as OtlpGrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { errorMessage } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';

/** Bound on one export to the collector (the same as Envoy's, xds/compile/tracing.ts). */
const EXPORT_TIMEOUT_MS = 5000;

/**
 * The OTLP span exporter for `endpoint` (an origin): gRPC to the origin, or protobuf over HTTP to
 * `<origin>/v1/traces` (the OTLP paths, as Envoy's tracer uses). TLS follows the scheme. Failures
 * are logged once per outage through `logger` (see `ReportingExporter`), never thrown.
 */
export function otlpExporter(
  endpoint: string,
  protocol: 'grpc' | 'http/protobuf',
  logger: Logger,
): SpanExporter {
  const exporter =
    protocol === 'grpc'
      ? new OtlpGrpcExporter({ url: endpoint, timeoutMillis: EXPORT_TIMEOUT_MS })
      : new OtlpProtoExporter({ url: `${endpoint}/v1/traces`, timeoutMillis: EXPORT_TIMEOUT_MS });
  return new ReportingExporter(exporter, endpoint, logger);
}

/**
 * A span exporter that logs a failing collector once (a warning on the first failed export after
 * a success, an info line when exports succeed again) rather than once per batch, and passes every
 * result on unchanged: the batch processor drops what failed, and no failure reaches a request.
 */
export class ReportingExporter implements SpanExporter {
  private failing = false;

  constructor(
    private readonly inner: SpanExporter,
    private readonly endpoint: string,
    private readonly logger: Logger,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) {
        if (this.failing)
          this.logger.info({ endpoint: this.endpoint }, 'trace export: the collector answers again');
        this.failing = false;
      } else if (!this.failing) {
        this.failing = true;
        this.logger.warn(
          { endpoint: this.endpoint, error: errorMessage(result.error ?? 'export failed') },
          'trace export failed: spans are dropped until the collector answers (logged once per outage)',
        );
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

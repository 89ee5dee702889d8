import {
  INVALID_SPAN_CONTEXT,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type SpanOptions,
} from '@opentelemetry/api';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { IRServiceTracing } from '../../ir/services.js';
import { errorMessage } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import type { SpanStarter } from '../../shared/trace-context.js';
import type { ReloadResult } from '../../runtime/subscribers.js';
import type { BuildSubscriber } from '../../runtime/subscribers.js';
import { otlpExporter } from './exporter.js';

/** What Portcullis's own tracing follows (the IR's); undefined when nothing is traced. */
export type TracingSettings = IRServiceTracing;

/**
 * A tracer provider for `settings`, registered nowhere (no global provider, propagator or context
 * manager: spans are started under explicit parent contexts, shared/trace-context.ts). Sampling is
 * ParentBased(TraceIdRatio(rate)): a request Envoy sampled is traced through Portcullis too, one it
 * did not is not, and root spans (reloads) are kept at `rate`. Spans are batched to the OTLP
 * exporter; `shutdown` flushes them.
 */
export function createTracerProvider(settings: TracingSettings, logger: Logger): BasicTracerProvider {
  return new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.samplingRate) }),
    spanProcessors: [new BatchSpanProcessor(otlpExporter(settings.endpoint, settings.protocol, logger))],
  });
}

/** The provider in use, with the settings it was made for (compared as JSON). */
interface Active {
  readonly key: string;
  readonly provider: BasicTracerProvider;
  readonly tracer: SpanStarter;
}

/**
 * Portcullis's spans as the runtime runs them: a tracer provider for the current config's
 * settings, made when a build first sets them and replaced (the old one flushed and shut down in
 * the background) only when they change, so unrelated reloads keep the provider. `tracer` follows
 * the current provider and starts no span while tracing is off. `reloaded` records one span per
 * reload; `close` flushes and shuts down. Exporter failures are logged once, never thrown.
 */
export class PortcullisTracing {
  private active: Active | undefined;
  private readonly retiring = new Set<Promise<void>>();

  /** Starts spans with the current provider; a non-recording span while tracing is off. */
  readonly tracer: SpanStarter = {
    startSpan: (name: string, options?: SpanOptions, context?: Context): Span =>
      this.active?.tracer.startSpan(name, options, context) ?? trace.wrapSpanContext(INVALID_SPAN_CONTEXT),
  };

  constructor(private readonly logger: Logger) {}

  /** Follows each accepted build's settings (a reload subscriber; it never refuses a build). */
  subscriber(): BuildSubscriber {
    return { name: 'tracing', publish: (build) => this.install(build.ir.observability.tracing) };
  }

  /** Makes the provider for `settings` unless the current one was made for the same. */
  install(settings: TracingSettings | undefined): void {
    const key = JSON.stringify(settings ?? null);
    if (this.active?.key === key) return;
    this.retire(this.active);
    if (settings === undefined) {
      this.active = undefined;
      return;
    }
    const provider = createTracerProvider(settings, this.logger.child({ component: 'tracing' }));
    this.active = { key, provider, tracer: provider.getTracer('portcullis') };
    this.logger.info(
      { endpoint: settings.endpoint, protocol: settings.protocol, sampling_rate: settings.samplingRate },
      'tracing: exporting spans over OTLP',
    );
  }

  /**
   * One `config reload` span per pass of the reload loop (a root span, sampled at the rate): its
   * outcome, the version and route count it made or the stage that refused it, ending now and
   * lasting `seconds` (the Reloader's `onReload` measures from reading to publishing).
   */
  reloaded(result: ReloadResult, seconds: number): void {
    const tracer = this.active?.tracer;
    if (tracer === undefined) return;
    const end = Date.now();
    const ms = seconds * 1000;
    const span = tracer.startSpan(
      'config reload',
      {
        kind: SpanKind.INTERNAL,
        startTime: end - ms,
        attributes: result.ok
          ? {
              'portcullis.config.version': result.snapshot.version,
              'portcullis.config.routes': result.ir.process.routeCount,
            }
          : { 'portcullis.reload.stage': result.stage, 'portcullis.reload.problems': result.problems.length },
      },
      ROOT_CONTEXT,
    );
    if (!result.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: `refused at ${result.stage}` });
    span.end(end);
  }

  /** Flushes and shuts down every provider (the current one and any still retiring). */
  async close(): Promise<void> {
    this.retire(this.active);
    this.active = undefined;
    await Promise.all([...this.retiring]);
  }

  private retire(active: Active | undefined): void {
    if (active === undefined) return;
    const done = active.provider
      .shutdown()
      // The final flush failing was already logged by the exporter (exporter.ts).
      .catch((err: unknown) => this.logger.debug({ error: errorMessage(err) }, 'tracing: final flush failed'))
      .finally(() => this.retiring.delete(done));
    this.retiring.add(done);
  }
}

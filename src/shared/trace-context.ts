import { ROOT_CONTEXT, type Context, type TextMapGetter, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

/** Reads one header (or gRPC metadata entry) by its lower-case name; undefined when absent. */
export type HeaderReader = (name: string) => string | undefined;

const GETTER: TextMapGetter<HeaderReader> = {
  keys: () => ['traceparent', 'tracestate'],
  get: (read, key) => read(key.toLowerCase()),
};

/**
 * The context whose parent is the W3C trace context (`traceparent`, `tracestate`) that `read`
 * finds, or the root context when there is none or it does not parse. Services start their spans
 * under it explicitly (`tracer.startSpan(name, options, parent)`), so no global propagator or
 * context manager is registered: Envoy's span is the parent of the Check and callback spans.
 */
export function traceParentContext(read: HeaderReader): Context {
  return new W3CTraceContextPropagator().extract(ROOT_CONTEXT, read, GETTER);
}

/**
 * The part of an OpenTelemetry `Tracer` the services use: spans started under an explicit parent
 * context. The runtime passes one that follows the current config (observability/tracing); tests pass a
 * provider's tracer, and without one nothing is traced.
 */
export type SpanStarter = Pick<Tracer, 'startSpan'>;

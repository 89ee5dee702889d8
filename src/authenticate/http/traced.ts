import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { errorMessage } from '../../shared/errors.js';
import { traceParentContext } from '../../shared/trace-context.js';
import type { OwnHandler } from './types.js';

/**
 * `handler`, traced as span `name` (kind SERVER) when the context has a tracer: the span's parent
 * is the `traceparent` of the request, which Envoy's router sets to its own span on every request
 * it forwards while tracing (replacing any the client sent), so the span joins Envoy's trace and
 * its sampling. The span records the status answered; a 5xx or a thrown error marks it ERROR.
 */
export function tracedHandler(name: string, handler: OwnHandler): OwnHandler {
  return async (request, context) => {
    const tracer = context.tracer;
    if (tracer === undefined) return handler(request, context);
    const span = tracer.startSpan(
      name,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': request.method,
          'url.path': request.url.pathname,
          'server.address': request.url.hostname,
          'portcullis.request_id': request.requestId,
        },
      },
      traceParentContext((header) => request.headers[header]),
    );
    try {
      const response = await handler(request, context);
      span.setAttribute('http.response.status_code', response.status);
      if (response.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      return response;
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(error) });
      throw error;
    } finally {
      span.end();
    }
  };
}

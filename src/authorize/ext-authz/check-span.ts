import type * as grpc from '@grpc/grpc-js';
import { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import { decisionOutcome } from '../../contract/telemetry.js';
import { errorMessage } from '../../shared/errors.js';
import { traceParentContext, type SpanStarter } from '../../shared/trace-context.js';
import type { AuthorizeRequest, Decision } from '../decision.js';

/**
 * Starts the `ext_authz Check` span (kind SERVER) under the trace context Envoy sent in the gRPC
 * call's metadata: Envoy's tracer injects `traceparent` into the Check call it makes as a child of
 * the request's span, so the Check joins Envoy's trace and inherits its sampling. The CheckRequest's
 * HTTP headers are not read for it: a `traceparent` there is whatever the client sent. Undefined
 * without a tracer.
 */
export function startCheckSpan(
  tracer: SpanStarter | undefined,
  metadata: grpc.Metadata,
  request: AuthorizeRequest,
): Span | undefined {
  if (tracer === undefined) return undefined;
  const parent = traceParentContext((name) => {
    const value = metadata.get(name)[0];
    return value === undefined ? undefined : value.toString();
  });
  return tracer.startSpan(
    'ext_authz Check',
    {
      kind: SpanKind.SERVER,
      attributes: {
        'rpc.system': 'grpc',
        'rpc.service': 'envoy.service.auth.v3.Authorization',
        'rpc.method': 'Check',
        'portcullis.route_id': request.routeId ?? '',
        'http.request.method': request.method,
        'url.path': request.path,
        'server.address': request.host,
        'portcullis.request_id': request.requestId,
      },
    },
    parent,
  );
}

/**
 * Ends a Check span with how the Check was answered: the outcome and, for a refusal, the status the
 * client gets; an error (the call failed) sets the span's status to ERROR.
 */
export function endCheckSpan(span: Span | undefined, answer: Decision | { readonly error: unknown }): void {
  if (span === undefined) return;
  if ('error' in answer) {
    span.setAttribute('portcullis.decision', 'error');
    span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(answer.error) });
  } else {
    const status = answer.kind === 'allow' ? undefined : answer.status;
    span.setAttribute('portcullis.decision', decisionOutcome(status));
    if (status !== undefined) span.setAttribute('http.response.status_code', status);
  }
  span.end();
}

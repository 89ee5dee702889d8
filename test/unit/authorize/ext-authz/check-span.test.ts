// The ext_authz Check span (check-span.ts): a child of the span Envoy names in the Check call's
// gRPC metadata (`traceparent`), never of a `traceparent` in the checked request's headers, sampled
// as Envoy sampled, ended with the decision.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { endCheckSpan, startCheckSpan } from '../../../../src/authorize/ext-authz/check-span.js';
import type { AuthorizeRequest } from '../../../../src/authorize/decision.js';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const ENVOY_SPAN = 'b7ad6b7169203331';

function tracing(): { exporter: InMemorySpanExporter; provider: BasicTracerProvider } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(1) }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  return { exporter, provider };
}

const request: AuthorizeRequest = {
  routeId: '0123456789abcdef',
  requestId: 'req-1',
  method: 'GET',
  scheme: 'https',
  host: 'app.test',
  path: '/page',
  query: '',
  // What the client sent: never the Check's parent.
  headers: { traceparent: '00-11111111111111111111111111111111-2222222222222222-01' },
  sourceIp: '10.0.0.1',
};

function metadata(flags: string): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set('traceparent', `00-${TRACE}-${ENVOY_SPAN}-${flags}`);
  return md;
}

test("the Check span is a SERVER child of Envoy's span from the call metadata, ended with the decision", () => {
  const { exporter, provider } = tracing();
  const span = startCheckSpan(provider.getTracer('t'), metadata('01'), request);
  endCheckSpan(span, { kind: 'deny', status: 302, headers: [], body: '', reasons: [] });
  const [finished] = exporter.getFinishedSpans();
  assert.ok(finished);
  assert.equal(finished.name, 'ext_authz Check');
  assert.equal(finished.kind, SpanKind.SERVER);
  assert.equal(finished.spanContext().traceId, TRACE);
  assert.equal(finished.parentSpanContext?.spanId, ENVOY_SPAN);
  assert.equal(finished.attributes['portcullis.route_id'], '0123456789abcdef');
  assert.equal(finished.attributes['portcullis.request_id'], 'req-1');
  assert.equal(finished.attributes['portcullis.decision'], 'sign_in');
  assert.equal(finished.attributes['http.response.status_code'], 302);
});

test('a request Envoy did not sample is not traced; an allow and an error end as such', () => {
  const { exporter, provider } = tracing();
  const tracer = provider.getTracer('t');
  const unsampled = startCheckSpan(tracer, metadata('00'), request);
  assert.equal(unsampled?.isRecording(), false);
  endCheckSpan(unsampled, { kind: 'allow', setHeaders: [], removeHeaders: [], reasons: [] });
  endCheckSpan(startCheckSpan(tracer, metadata('01'), request), {
    kind: 'allow',
    setHeaders: [],
    removeHeaders: [],
    reasons: [],
  });
  endCheckSpan(startCheckSpan(tracer, metadata('01'), request), { error: new Error('boom') });
  const [allowed, failed] = exporter.getFinishedSpans();
  assert.equal(exporter.getFinishedSpans().length, 2);
  assert.equal(allowed?.attributes['portcullis.decision'], 'allow');
  assert.equal(allowed?.attributes['http.response.status_code'], undefined);
  assert.equal(failed?.attributes['portcullis.decision'], 'error');
  assert.deepEqual(failed?.status, { code: SpanStatusCode.ERROR, message: 'boom' });
});

test('without a tracer there is no span; without metadata context the Check is a root span', () => {
  assert.equal(startCheckSpan(undefined, metadata('01'), request), undefined);
  endCheckSpan(undefined, { error: new Error('ignored') });
  const { exporter, provider } = tracing();
  endCheckSpan(startCheckSpan(provider.getTracer('t'), new grpc.Metadata(), request), {
    kind: 'allow',
    setHeaders: [],
    removeHeaders: [],
    reasons: [],
  });
  const [root] = exporter.getFinishedSpans();
  assert.equal(root?.parentSpanContext, undefined, "the request headers' traceparent is not used");
  assert.notEqual(root?.spanContext().traceId, '11111111111111111111111111111111');
});

// A traced handler (traced.ts): the sign-in callback's span is a child of the `traceparent` Envoy's
// router sets on the request, records the status answered, marks 5xx and thrown errors, and the
// handler runs untouched without a tracer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { tracedHandler } from '../../../../src/authenticate/http/traced.js';
import type {
  HandlerContext,
  OwnHandler,
  OwnRequest,
  OwnResponse,
} from '../../../../src/authenticate/http/types.js';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const ENVOY_SPAN = 'b7ad6b7169203331';

const request = {
  method: 'GET',
  url: new URL('https://authenticate.test/oauth2/callback?code=c&state=s'),
  headers: { traceparent: `00-${TRACE}-${ENVOY_SPAN}-01` },
  requestId: 'req-9',
} as unknown as OwnRequest;

const answer = (status: number): OwnResponse => ({ status, headers: [], setCookies: [], body: '' });

function setup(handler: OwnHandler): { exporter: InMemorySpanExporter; run: () => Promise<OwnResponse> } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const context = { tracer: provider.getTracer('t') } as unknown as HandlerContext;
  return { exporter, run: () => tracedHandler('sign-in callback', handler)(request, context) };
}

test("the span is a SERVER child of Envoy's span and records the status", async () => {
  const { exporter, run } = setup(async () => answer(302));
  assert.equal((await run()).status, 302);
  const [span] = exporter.getFinishedSpans();
  assert.equal(span?.name, 'sign-in callback');
  assert.equal(span?.kind, SpanKind.SERVER);
  assert.equal(span?.spanContext().traceId, TRACE);
  assert.equal(span?.parentSpanContext?.spanId, ENVOY_SPAN);
  assert.equal(span?.attributes['http.response.status_code'], 302);
  assert.equal(span?.attributes['url.path'], '/oauth2/callback');
  assert.equal(span?.attributes['portcullis.request_id'], 'req-9');
  assert.equal(span?.status.code, SpanStatusCode.UNSET);
});

test('a 5xx answer and a thrown error mark the span ERROR; the error still propagates', async () => {
  const unavailable = setup(async () => answer(503));
  await unavailable.run();
  assert.equal(unavailable.exporter.getFinishedSpans()[0]?.status.code, SpanStatusCode.ERROR);
  const thrown = setup(async () => {
    throw new Error('store down');
  });
  await assert.rejects(thrown.run(), /store down/);
  assert.deepEqual(thrown.exporter.getFinishedSpans()[0]?.status, {
    code: SpanStatusCode.ERROR,
    message: 'store down',
  });
});

test('without a tracer the handler runs as it is', async () => {
  let calls = 0;
  const handler: OwnHandler = async () => {
    calls += 1;
    return answer(200);
  };
  const response = await tracedHandler('x', handler)(request, {} as HandlerContext);
  assert.equal(response.status, 200);
  assert.equal(calls, 1);
});

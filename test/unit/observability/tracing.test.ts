// Portcullis's own tracing (observability/tracing): settings from the config, one tracer provider per
// distinct settings (kept across unrelated reloads, replaced and flushed when they change),
// ParentBased(TraceIdRatio) sampling, a span per reload, spans flushed to the OTLP collector on
// close, and a failing collector logged once per outage.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_CONTEXT, TraceFlags, trace } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { parseConfig } from '../../../src/config/parse-config.js';
import { translateObservability } from '../../../src/translate/services.js';
import { PortcullisTracing, type TracingSettings } from '../../../src/observability/tracing/tracing.js';
import { ReportingExporter } from '../../../src/observability/tracing/exporter.js';
import type { BuildResult } from '../../../src/runtime/build-pipeline.js';
import { recordingLogger } from '../../../src/shared/logger.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../support/otlp-receiver.js';
import { SIGN_IN } from '../../support/sign-in-config.js';

let receiver: OtlpReceiver;
before(async () => {
  receiver = await startOtlpReceiver();
});
after(async () => {
  await receiver?.stop();
});

/** A context whose parent is a remote span with the given sampled flag. */
function parent(sampled: boolean, traceId = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa') {
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId,
    spanId: 'bbbbbbbbbbbbbbbb',
    traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote: true,
  });
}

const refused: BuildResult = {
  ok: false,
  stage: 'parse',
  problems: [{ path: 'routes', message: 'bad' }],
  warnings: [],
  filesRead: [],
};

function settings(overrides: Partial<TracingSettings> = {}): TracingSettings {
  return {
    endpoint: receiver.grpcEndpoint,
    protocol: 'grpc',
    samplingRate: 1,
    serviceName: 'portcullis-test',
    ...overrides,
  };
}

test('settings come from the config: none without an endpoint; the service label names spans', () => {
  const parse = (extra: Record<string, unknown>) => {
    const parsed = parseConfig({
      document: { ...SIGN_IN, insecure_server: true, ...extra, routes: [] },
      env: {},
      readText: () => '',
    });
    assert.ok(parsed.config, JSON.stringify(parsed.problems));
    return translateObservability(parsed.config).tracing;
  };
  assert.equal(parse({ tracing_sampling_rate: 1 }), undefined);
  assert.deepEqual(
    parse({
      otel_exporter_otlp_endpoint: 'http://collector.test:4318',
      otel_exporter_otlp_protocol: 'http/protobuf',
      tracing_sampling_rate: 0.5,
    }),
    {
      endpoint: 'http://collector.test:4318',
      protocol: 'http/protobuf',
      samplingRate: 0.5,
      serviceName: 'portcullis',
    },
  );
});

test('without settings nothing is recorded', async () => {
  const tracing = new PortcullisTracing(recordingLogger());
  const span = tracing.tracer.startSpan('x', {}, parent(true));
  assert.equal(span.isRecording(), false);
  span.end();
  tracing.reloaded(refused, 0.01);
  await tracing.close();
});

test('spans follow the parent sampled flag, reloads are root spans, and close flushes to the collector', async () => {
  receiver.spans.length = 0;
  const logger = recordingLogger();
  const tracing = new PortcullisTracing(logger);
  tracing.install(settings({ samplingRate: 0 }));
  tracing.install(settings({ samplingRate: 0 }));
  assert.equal(
    logger.records.filter((record) => record.msg?.startsWith('tracing: exporting')).length,
    1,
    'the same settings keep the provider',
  );
  const sampledTrace = 'cccccccccccccccccccccccccccccccc';
  const kept = tracing.tracer.startSpan('kept', {}, parent(true, sampledTrace));
  const dropped = tracing.tracer.startSpan('dropped', {}, parent(false));
  assert.equal(kept.isRecording(), true, "Envoy's sampled request is traced at rate 0 too");
  assert.equal(dropped.isRecording(), false, 'an unsampled one is not');
  kept.end();
  dropped.end();
  tracing.reloaded(refused, 0.01);
  // New settings: a new provider; the old one is flushed in the background, close waits for it.
  tracing.install(settings({ samplingRate: 1, protocol: 'http/protobuf', endpoint: receiver.httpEndpoint }));
  tracing.reloaded(refused, 0.25);
  await tracing.close();
  assert.deepEqual(
    receiver.spans.map((span) => span.name).sort(),
    ['config reload', 'kept'],
    'one reload at rate 1 (none at rate 0), the sampled child',
  );
  const keptSpan = receiver.spans.find((span) => span.name === 'kept');
  assert.equal(keptSpan?.traceId, sampledTrace);
  assert.equal(keptSpan?.parentSpanId, 'bbbbbbbbbbbbbbbb');
  assert.equal(keptSpan?.service, 'portcullis-test');
  const reload = receiver.spans.find((span) => span.name === 'config reload');
  assert.equal(reload?.parentSpanId, '', 'a root span');
  assert.equal(reload?.attributes['portcullis.reload.stage'], 'parse');
});

test('a failing collector is logged once per outage, and every result is passed on', async () => {
  const results: ExportResult[] = [
    { code: ExportResultCode.FAILED, error: new Error('connect ECONNREFUSED') },
    { code: ExportResultCode.FAILED, error: new Error('connect ECONNREFUSED') },
    { code: ExportResultCode.SUCCESS },
    { code: ExportResultCode.FAILED, error: new Error('deadline exceeded') },
  ];
  const inner: SpanExporter = {
    export: (_spans, done) => done(results.shift() ?? { code: ExportResultCode.SUCCESS }),
    shutdown: async () => {},
  };
  const logger = recordingLogger();
  const exporter = new ReportingExporter(inner, 'http://collector.test:4317', logger);
  const seen: ExportResultCode[] = [];
  for (let i = 0; i < 4; i += 1) exporter.export([] as ReadableSpan[], (result) => seen.push(result.code));
  assert.deepEqual(seen, [
    ExportResultCode.FAILED,
    ExportResultCode.FAILED,
    ExportResultCode.SUCCESS,
    ExportResultCode.FAILED,
  ]);
  assert.deepEqual(
    logger.records.map((record) => [record.level, (record.obj as { error?: string }).error]),
    [
      ['warn', 'connect ECONNREFUSED'],
      ['info', undefined],
      ['warn', 'deadline exceeded'],
    ],
  );
});

test('a real exporter to a closed port: close does not throw, the failure is logged once (~5 s of retries)', async () => {
  const logger = recordingLogger();
  const tracing = new PortcullisTracing(logger);
  tracing.install(settings({ endpoint: 'http://127.0.0.1:9', protocol: 'http/protobuf' }));
  for (let i = 0; i < 3; i += 1) tracing.reloaded(refused, 0);
  await tracing.close();
  const warnings = logger.records.filter((record) => record.level === 'warn');
  assert.equal(warnings.length, 1, JSON.stringify(logger.records));
  assert.match(String(warnings[0]?.msg), /trace export failed/);
});

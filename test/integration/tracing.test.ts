// Tracing through the real Envoy (issue 26, item 5): with `otel_exporter_otlp_endpoint` Envoy's
// OpenTelemetry tracer and Portcullis's tracer both export to an in-process OTLP receiver, and a
// protected request's trace holds Envoy's spans and Portcullis's `ext_authz Check` span, the Check
// a child of Envoy's span (the trace context rides in the Check call's gRPC metadata). At rate 1
// over gRPC every request and the config load are traced; at rate 0 over OTLP/HTTP nothing is,
// not even a request whose client sent a sampled `traceparent` (Envoy decides), until a reload
// sets rate 1. Envoy validates the TLS variants.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../src/config/parse-config.js';
import { translate } from '../../src/translate/translate.js';
import { compile } from '../../src/xds/compile/compile.js';
import { CLUSTER_TYPE, LISTENER_TYPE } from '../../src/proto/type-urls.js';
import { buildBootstrap } from '../../src/envoy/bootstrap.js';
import { locateEnvoy } from '../../src/envoy/locate.js';
import { validateBootstrap } from '../../src/envoy/supervisor.js';
import { proxyRequest, startPortcullis } from '../support/portcullis.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstreams.js';
import { waitFor } from '../support/wait.js';
import { SIGN_IN } from '../support/sign-in-config.js';
import { generateTestCertificate } from '../support/test-certs.js';
import { TEST_GRPC_CREDENTIAL } from '../support/grpc-credential.js';

let upstream: EchoUpstream;
let receiver: OtlpReceiver;

before(async () => {
  upstream = await startEchoUpstream({ id: 'up' });
  receiver = await startOtlpReceiver();
});

after(async () => {
  await receiver?.stop();
  await upstream?.stop();
});

const ROUTES = [{ from: 'https://protected.test', to: '', allowed_users: ['ada@example.com'] }];
const routes = (): unknown[] => ROUTES.map((route) => ({ ...route, to: upstream.url }));

/** The spans of `traceId` once both Envoy's and Portcullis's Check span have arrived. */
async function traceWithCheck(traceId: () => string | undefined, what: string): Promise<ReceivedSpan[]> {
  return waitFor(
    async () => {
      const id = traceId();
      const spans = receiver.spans.filter((span) => span.traceId === id);
      const joined =
        spans.some((span) => span.scope === 'portcullis' && span.name === 'ext_authz Check') &&
        spans.some((span) => span.scope !== 'portcullis');
      return joined ? spans : undefined;
    },
    // Envoy and the SDK's batch processor both export every 5 s.
    { what, timeoutMs: 30_000, intervalMs: 100 },
  );
}

/** The Check span of `spans`, asserted to be a child of one of Envoy's spans in the same trace. */
function assertCheckUnderEnvoy(spans: readonly ReceivedSpan[]): {
  check: ReceivedSpan;
  envoy: ReceivedSpan[];
} {
  const check = spans.find((span) => span.name === 'ext_authz Check');
  assert.ok(check);
  const envoy = spans.filter((span) => span.scope !== 'portcullis');
  const parent = envoy.find((span) => span.spanId === check.parentSpanId);
  assert.ok(
    parent,
    `the Check's parent ${check.parentSpanId} is one of Envoy's spans: ${JSON.stringify(envoy.map((s) => [s.name, s.spanId]))}`,
  );
  return { check, envoy };
}

test('rate 1 over gRPC: a protected request is one trace, Envoy span -> Portcullis Check span', async () => {
  const portcullis = await startPortcullis({
    otel_exporter_otlp_endpoint: receiver.grpcEndpoint,
    otel_exporter_otlp_protocol: 'grpc',
    tracing_sampling_rate: 1,
    routes: routes(),
  });
  try {
    const response = await proxyRequest(portcullis.proxyPort, 'protected.test', '/page', {
      headers: { accept: 'text/html' },
    });
    assert.equal(response.status, 302, 'no session: sent to sign in (the Check answered)');
    const requestId = String(response.headers['x-request-id']);
    let traceId: string | undefined;
    const spans = await traceWithCheck(() => {
      traceId ??= receiver.spans.find(
        (span) => span.name === 'ext_authz Check' && span.attributes['portcullis.request_id'] === requestId,
      )?.traceId;
      return traceId;
    }, 'the request trace with Envoy and Check spans');
    const { check, envoy } = assertCheckUnderEnvoy(spans);
    assert.equal(check.service, 'portcullis');
    assert.equal(check.attributes['portcullis.decision'], 'sign_in');
    assert.equal(check.attributes['http.response.status_code'], 302);
    assert.ok(
      envoy.every((span) => span.service === 'portcullis'),
      'Envoy is named by the service label',
    );
    const root = envoy.find((span) => span.parentSpanId === '');
    assert.ok(root, 'Envoy started the trace (the request carried no traceparent)');
    // The config load is traced too (a root span of its own).
    await waitFor(async () => receiver.spans.some((span) => span.name === 'config reload'), {
      what: 'the config load span',
      timeoutMs: 10_000,
    });
  } finally {
    await portcullis.stop();
  }
});

test('rate 0 over OTLP/HTTP traces nothing, even a client-sampled traceparent; a reload to rate 1 does', async () => {
  receiver.spans.length = 0;
  const settings = {
    otel_exporter_otlp_endpoint: receiver.httpEndpoint,
    otel_exporter_otlp_protocol: 'http/protobuf',
    routes: routes(),
  };
  const portcullis = await startPortcullis({ ...settings, tracing_sampling_rate: 0 });
  try {
    const unsampled = await proxyRequest(portcullis.proxyPort, 'protected.test', '/a');
    assert.equal(unsampled.status, 302);
    // Envoy's sampling decision wins over the client's flag, and `x-client-trace-id` forces
    // nothing (client_sampling 0): a client cannot make Envoy or Portcullis trace.
    const clientTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const forced = await proxyRequest(portcullis.proxyPort, 'protected.test', '/b', {
      headers: { traceparent: `00-${clientTrace}-00f067aa0ba902b7-01`, 'x-client-trace-id': 'force-me' },
    });
    assert.equal(forced.status, 302);
    // The control: the same process and receiver trace once the config says rate 1.
    const reloads = portcullis.running.reloader.current().reloads;
    portcullis.writeConfig({ ...portcullis.baseConfig(), tracing_sampling_rate: 1 });
    await waitFor(async () => portcullis.running.reloader.current().reloads > reloads, {
      what: 'the reload to rate 1',
    });
    await portcullis.waitForEnvoyToApply('tracing_sampling_rate 1');
    const sampled = await proxyRequest(portcullis.proxyPort, 'protected.test', '/c');
    const requestId = String(sampled.headers['x-request-id']);
    let traceId: string | undefined;
    const spans = await traceWithCheck(() => {
      traceId ??= receiver.spans.find(
        (span) => span.attributes['portcullis.request_id'] === requestId,
      )?.traceId;
      return traceId;
    }, 'the trace of the request after the reload');
    assertCheckUnderEnvoy(spans);
    // Exports go out in order, so spans of the earlier requests would have come by now.
    const others = receiver.spans.filter((span) => span.traceId !== traceId).map((span) => span.name);
    assert.ok(
      others.length > 0 && others.every((name) => name === 'config reload'),
      `nothing from rate 0, only the reload to rate 1 (a root span of its own): ${JSON.stringify(others)}`,
    );
    assert.ok(receiver.spans.every((span) => span.traceId !== clientTrace));
  } finally {
    await portcullis.stop();
  }
});

test('Envoy accepts the tracing config for https collectors, over gRPC and OTLP/HTTP', async () => {
  const certificate = generateTestCertificate();
  const envoy = await locateEnvoy();
  for (const protocol of ['grpc', 'http/protobuf']) {
    const parsed = parseConfig({
      document: {
        ...SIGN_IN,
        address: '127.0.0.1:8080',
        insecure_server: true,
        otel_exporter_otlp_endpoint: 'https://collector.test:4317',
        otel_exporter_otlp_protocol: protocol,
        tracing_sampling_rate: 0.5,
        routes: [{ from: 'http://app.test', to: 'http://10.0.0.1:8080' }],
      },
      env: {},
      readText: () => '',
    });
    assert.ok(parsed.config, JSON.stringify(parsed.problems));
    const { ir } = translate(parsed.config, { systemCaFile: certificate.certFile });
    assert.ok(ir);
    const resources = compile(ir);
    const bootstrap = buildBootstrap({
      ads: { address: '127.0.0.1', port: 1, credential: TEST_GRPC_CREDENTIAL },
      admin: { port: 0 },
    });
    const statics = bootstrap.static_resources as { clusters: unknown[] };
    const result = await validateBootstrap(envoy.path, {
      ...bootstrap,
      static_resources: {
        ...statics,
        listeners: resources[LISTENER_TYPE].map(({ message }) => message),
        clusters: [...statics.clusters, ...resources[CLUSTER_TYPE].map(({ message }) => message)],
      },
    });
    assert.ok(result.ok, `envoy --mode validate rejected ${protocol}:\n${result.output}`);
  }
});

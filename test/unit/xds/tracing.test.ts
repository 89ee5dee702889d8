// Envoy's tracing compiled (xds/compile/tracing.ts): with `otel_exporter_otlp_endpoint` the
// connection manager gets Envoy's OpenTelemetry tracer exporting to a collector cluster (gRPC or
// OTLP/HTTP per `otel_exporter_otlp_protocol`), sampling `tracing_sampling_rate` as a percentage,
// named by the `service` label; without it nothing changes. Every field is one Envoy's proto
// declares, and it survives encoding. (test/integration/tracing.test.ts has Envoy validate it.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../../src/config/parse-config.js';
import { translate } from '../../../src/translate/translate.js';
import { compile } from '../../../src/xds/compile/compile.js';
import { CLUSTER_TYPE, LISTENER_TYPE } from '../../../src/proto/type-urls.js';
import { assertKnownFields, decodeMessage, encodeMessage } from '../../../src/proto/codec.js';
import { OPENTELEMETRY_TRACER, TRACING_CLUSTER } from '../../../src/xds/compile/tracing.js';
import { SIGN_IN } from '../../support/sign-in-config.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function compiled(settings: Record<string, unknown>): { hcm: Json; clusters: Json[] } {
  const parsed = parseConfig({
    document: {
      ...SIGN_IN,
      address: '127.0.0.1:8080',
      insecure_server: true,
      ...settings,
      routes: [{ from: 'http://app.test', to: 'http://10.0.0.1:8080' }],
    },
    env: {},
    readText: () => '',
  });
  assert.deepEqual(parsed.problems, []);
  assert.ok(parsed.config);
  const { ir } = translate(parsed.config, { systemCaFile: '/etc/ssl/certs/ca-certificates.crt' });
  assert.ok(ir);
  const resources = compile(ir);
  const listener = resources[LISTENER_TYPE].find(({ name }) => name === 'http-ingress')?.message as Json;
  assert.ok(listener);
  assertKnownFields('envoy.config.listener.v3.Listener', listener);
  const decoded = decodeMessage(
    'envoy.config.listener.v3.Listener',
    encodeMessage('envoy.config.listener.v3.Listener', listener),
  ) as Json;
  const clusters = resources[CLUSTER_TYPE].map(({ message }) => message as Json);
  for (const cluster of clusters) assertKnownFields('envoy.config.cluster.v3.Cluster', cluster);
  return { hcm: decoded.filter_chains[0].filters[0].typed_config as Json, clusters };
}

test('without an OTLP endpoint Envoy traces nothing and has no collector cluster', () => {
  const { hcm, clusters } = compiled({ tracing_sampling_rate: 1 });
  assert.equal(hcm.tracing, undefined);
  assert.equal(
    clusters.find((cluster) => cluster.name === TRACING_CLUSTER),
    undefined,
  );
});

test('OTLP over gRPC: the OpenTelemetry tracer exports to the collector cluster over HTTP/2', () => {
  const { hcm, clusters } = compiled({
    otel_exporter_otlp_endpoint: 'http://collector.test:4317',
    tracing_sampling_rate: 0.25,
  });
  assert.deepEqual(hcm.tracing.random_sampling, { value: 25 });
  assert.deepEqual(hcm.tracing.client_sampling, { value: 0 }, 'x-client-trace-id forces nothing');
  assert.equal(hcm.tracing.provider.name, OPENTELEMETRY_TRACER);
  const tracer = hcm.tracing.provider.typed_config;
  assert.equal(tracer['@type'], 'type.googleapis.com/envoy.config.trace.v3.OpenTelemetryConfig');
  assert.equal(tracer.service_name, 'portcullis', 'the service label (all-in-one)');
  assert.deepEqual(tracer.grpc_service.envoy_grpc, { cluster_name: TRACING_CLUSTER });
  assert.equal(tracer.http_service, undefined);
  const cluster = clusters.find((each) => each.name === TRACING_CLUSTER);
  assert.ok(cluster);
  assert.equal(cluster.type, 'STRICT_DNS', 'a host name');
  assert.deepEqual(cluster.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address, {
    socket_address: { address: 'collector.test', port_value: 4317 },
  });
  const options = Object.values(cluster.typed_extension_protocol_options as Json)[0] as Json;
  assert.ok(options.explicit_http_config.http2_protocol_options, 'gRPC needs HTTP/2');
  assert.equal(cluster.transport_socket, undefined, 'http:// is plain');
});

test('OTLP/HTTP: protobuf POSTed to <endpoint>/v1/traces over HTTP/1.1; https verifies the collector', () => {
  const { hcm, clusters } = compiled({
    otel_exporter_otlp_endpoint: 'https://collector.test',
    otel_exporter_otlp_protocol: 'http/protobuf',
    tracing_sampling_rate: 1,
    services: 'authorize,proxy',
    databroker_service_url: 'http://127.0.0.1:5443',
    authenticate_internal_service_url: 'http://127.0.0.1:5444',
    shared_secret: Buffer.alloc(32, 1).toString('base64'),
    cookie_secret: Buffer.alloc(32, 2).toString('base64'),
  });
  assert.deepEqual(hcm.tracing.random_sampling, { value: 100 });
  const tracer = hcm.tracing.provider.typed_config;
  assert.equal(tracer.service_name, 'portcullis-authorize-proxy', 'the split service label');
  assert.equal(tracer.grpc_service, undefined);
  assert.equal(tracer.http_service.http_uri.uri, 'https://collector.test/v1/traces');
  assert.equal(tracer.http_service.http_uri.cluster, TRACING_CLUSTER);
  const cluster = clusters.find((each) => each.name === TRACING_CLUSTER);
  assert.ok(cluster);
  assert.equal(
    cluster.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value,
    443,
  );
  const options = Object.values(cluster.typed_extension_protocol_options as Json)[0] as Json;
  assert.ok(options.explicit_http_config.http_protocol_options);
  const tls = cluster.transport_socket.typed_config;
  assert.equal(tls.sni, 'collector.test');
  assert.deepEqual(tls.common_tls_context.validation_context.trusted_ca, {
    filename: '/etc/ssl/certs/ca-certificates.crt',
  });
  assert.deepEqual(tls.common_tls_context.validation_context.match_typed_subject_alt_names, [
    { san_type: 'DNS', matcher: { exact: 'collector.test' } },
  ]);
});

test('an IP collector is a STATIC cluster verified by IP SAN, with ALPN h2 for gRPC over TLS', () => {
  const { clusters } = compiled({ otel_exporter_otlp_endpoint: 'https://[::1]:4317' });
  const cluster = clusters.find((each) => each.name === TRACING_CLUSTER);
  assert.ok(cluster);
  assert.equal(cluster.type, 'STATIC');
  assert.equal(
    cluster.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address,
    '::1',
  );
  const tls = cluster.transport_socket.typed_config;
  assert.equal(tls.sni, undefined, 'no SNI for an IP');
  assert.deepEqual(tls.common_tls_context.alpn_protocols, ['h2']);
  assert.deepEqual(tls.common_tls_context.validation_context.match_typed_subject_alt_names, [
    { san_type: 'IP_ADDRESS', matcher: { exact: '::1' } },
  ]);
});

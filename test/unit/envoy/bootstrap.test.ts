import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'yaml';
import {
  ADS_API_TYPES,
  type Bootstrap,
  bootstrapToYaml,
  buildBootstrap,
} from '../../../src/envoy/bootstrap.js';
import { PortcullisError } from '../../../src/shared/errors.js';
import { RE2_MAX_PROGRAM_SIZE } from '../../../src/shared/re2.js';
import { XDS_CLUSTER as XDS_CLUSTER_NAME } from '../../../src/contract/names.js';
import {
  GRPC_CREDENTIAL_SECRET_NAME,
  grpcCredentialUpstreamFilters,
} from '../../../src/contract/grpc-credential.js';
import { TEST_GRPC_CREDENTIAL } from '../../support/grpc-credential.js';

const ads = { address: '127.0.0.1', port: 5443, credential: TEST_GRPC_CREDENTIAL } as const;

/** Reads a nested field by path; fails the test with the path when it is missing. */
function at(obj: unknown, ...path: (string | number)[]): unknown {
  let cur: unknown = obj;
  for (const key of path) {
    assert.ok(cur !== null && typeof cur === 'object', `missing ${path.join('.')}`);
    cur = (cur as Record<string | number, unknown>)[key];
  }
  return cur;
}

function xdsCluster(b: Bootstrap): unknown {
  return at(b, 'static_resources', 'clusters', 0);
}

test('cluster name constant is portcullis-xds and is used everywhere it must be', () => {
  assert.equal(XDS_CLUSTER_NAME, 'portcullis-xds');
  const b = buildBootstrap({ ads });
  const grpc = at(b, 'dynamic_resources', 'ads_config', 'grpc_services', 0, 'envoy_grpc', 'cluster_name');
  assert.equal(grpc, XDS_CLUSTER_NAME);
  assert.equal(at(xdsCluster(b), 'name'), XDS_CLUSTER_NAME);
  assert.equal(at(xdsCluster(b), 'load_assignment', 'cluster_name'), XDS_CLUSTER_NAME);
});

test('admin listens on loopback by default and rejects routable addresses', () => {
  const b = buildBootstrap({ ads });
  assert.deepEqual(at(b, 'admin', 'address', 'socket_address'), { address: '127.0.0.1', port_value: 9901 });
  assert.doesNotThrow(() => buildBootstrap({ ads, admin: { address: '::1', port: 0 } }));
  assert.doesNotThrow(() => buildBootstrap({ ads, admin: { address: '127.0.0.2' } }));
  for (const address of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.5', 'localhost', '']) {
    assert.throws(
      () => buildBootstrap({ ads, admin: { address } }),
      (err: unknown) => err instanceof PortcullisError && err.code === 'ENVOY_BOOTSTRAP_INVALID',
      `admin.address ${address} must be refused`,
    );
  }
});

test('ADS api_type defaults to DELTA_GRPC and accepts GRPC; anything else is refused', () => {
  assert.deepEqual(ADS_API_TYPES, ['DELTA_GRPC', 'GRPC']);
  assert.equal(at(buildBootstrap({ ads }), 'dynamic_resources', 'ads_config', 'api_type'), 'DELTA_GRPC');
  const sotw = buildBootstrap({ ads, adsApiType: 'GRPC' });
  assert.equal(at(sotw, 'dynamic_resources', 'ads_config', 'api_type'), 'GRPC');
  assert.throws(() => buildBootstrap({ ads, adsApiType: 'REST' as 'GRPC' }), /adsApiType REST/);
});

test('ADS config: V3 transport, node sent once, LDS and CDS over ADS', () => {
  const b = buildBootstrap({ ads, nodeId: 'n1', nodeCluster: 'c1', initialFetchTimeout: '2s' });
  assert.deepEqual(at(b, 'node'), { id: 'n1', cluster: 'c1' });
  const dyn = at(b, 'dynamic_resources') as Record<string, unknown>;
  assert.equal(at(dyn, 'ads_config', 'transport_api_version'), 'V3');
  assert.equal(at(dyn, 'ads_config', 'set_node_on_first_message_only'), true);
  for (const key of ['lds_config', 'cds_config']) {
    assert.deepEqual(dyn[key], { ads: {}, initial_fetch_timeout: '2s', resource_api_version: 'V3' });
  }
  assert.notEqual(dyn['lds_config'], dyn['cds_config'], 'no shared objects (they would become YAML anchors)');
});

test('xDS cluster: STATIC for an IP, STRICT_DNS for a name, HTTP/2 with keepalive, 5s connect timeout', () => {
  const cluster = xdsCluster(buildBootstrap({ ads }));
  assert.equal(at(cluster, 'type'), 'STATIC');
  assert.equal(at(cluster, 'connect_timeout'), '5s');
  const endpoint = at(cluster, 'load_assignment', 'endpoints', 0, 'lb_endpoints', 0, 'endpoint', 'address');
  assert.deepEqual(endpoint, { socket_address: { address: '127.0.0.1', port_value: 5443 } });
  const http = at(
    cluster,
    'typed_extension_protocol_options',
    'envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
  );
  assert.equal(
    at(http, '@type'),
    'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
  );
  assert.ok(at(http, 'explicit_http_config', 'http2_protocol_options', 'connection_keepalive'));
  const named = xdsCluster(buildBootstrap({ ads: { ...ads, address: 'portcullis' } }));
  assert.equal(at(named, 'type'), 'STRICT_DNS');
});

test('overload manager: fixed heap monitor, shrink_heap at 0.95, stop_accepting_requests at 0.98', () => {
  const om = at(buildBootstrap({ ads, maxHeapSizeBytes: 512 * 1024 * 1024 }), 'overload_manager');
  const monitors = at(om, 'resource_monitors') as unknown[];
  const heap = monitors.find((m) => at(m, 'name') === 'envoy.resource_monitors.fixed_heap');
  assert.equal(at(heap, 'typed_config', 'max_heap_size_bytes'), 512 * 1024 * 1024);
  const conns = monitors.find(
    (m) => at(m, 'name') === 'envoy.resource_monitors.global_downstream_max_connections',
  );
  assert.equal(at(conns, 'typed_config', 'max_active_downstream_connections'), 50_000);
  const actions = at(om, 'actions') as unknown[];
  const threshold = (name: string): unknown =>
    at(
      actions.find((a) => at(a, 'name') === name),
      'triggers',
      0,
      'threshold',
      'value',
    );
  assert.equal(threshold('envoy.overload_actions.shrink_heap'), 0.95);
  assert.equal(threshold('envoy.overload_actions.stop_accepting_requests'), 0.98);
  const defaults = at(buildBootstrap({ ads }), 'overload_manager', 'resource_monitors', 0, 'typed_config');
  assert.equal(at(defaults, 'max_heap_size_bytes'), 1024 ** 3);
});

test('runtime layer bounds RE2 program size', () => {
  const layer = at(buildBootstrap({ ads }), 'layered_runtime', 'layers', 0, 'static_layer') as Record<
    string,
    unknown
  >;
  assert.equal(layer['re2.max_program_size.error_level'], RE2_MAX_PROGRAM_SIZE);
  assert.equal(layer['re2.max_program_size.warn_level'], 1024);
});

test('invalid numbers are collected into one error', () => {
  assert.throws(
    () =>
      buildBootstrap({
        ads: { ...ads, port: 0, credential: 'two words' },
        admin: { port: 70000 },
        maxHeapSizeBytes: -1,
      }),
    (err: unknown) =>
      err instanceof PortcullisError &&
      /admin\.port 70000/.test(err.message) &&
      /ads\.port 0/.test(err.message) &&
      /ads\.credential/.test(err.message) &&
      /maxHeapSizeBytes -1/.test(err.message),
  );
});

test('buildBootstrap is deterministic and bootstrapToYaml round-trips without anchors', () => {
  const a = buildBootstrap({ ads });
  assert.deepEqual(a, buildBootstrap({ ads }));
  const text = bootstrapToYaml(a);
  assert.doesNotMatch(text, /[&*]a\d/);
  assert.deepEqual(parse(text), a);
});

test('stats are flushed on admin reads only: no periodic flush holding the main thread at scale', () => {
  assert.equal(at(buildBootstrap({ ads }), 'stats_flush_on_admin'), true);
});

test('the gRPC credential is a static secret the ADS cluster injects, never initial_metadata (config_dump shows it)', () => {
  const bootstrap = buildBootstrap({ ads });
  const service = at(bootstrap, 'dynamic_resources', 'ads_config', 'grpc_services', 0);
  assert.equal(at(service, 'initial_metadata'), undefined);
  assert.deepEqual(at(bootstrap, 'static_resources', 'secrets'), [
    {
      name: GRPC_CREDENTIAL_SECRET_NAME,
      generic_secret: { secret: { inline_string: `Bearer ${TEST_GRPC_CREDENTIAL}` } },
    },
  ]);
  const options = at(
    bootstrap,
    'static_resources',
    'clusters',
    0,
    'typed_extension_protocol_options',
    'envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
  );
  assert.deepEqual(at(options, 'http_filters'), grpcCredentialUpstreamFilters());
  assert.equal(JSON.stringify(bootstrap).split(TEST_GRPC_CREDENTIAL).length, 2, 'the token appears once');
  for (const credential of ['', 'a b', 'tok\r\nx-evil: 1']) {
    assert.throws(
      () => buildBootstrap({ ads: { ...ads, credential } }),
      (err: unknown) => err instanceof PortcullisError && /ads\.credential/.test(err.message),
      JSON.stringify(credential),
    );
  }
});

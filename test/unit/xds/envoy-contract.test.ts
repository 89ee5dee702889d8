// The Envoy configuration contract of security-threats.md section 0.1, asserted on what the
// compiler emits (rendered through the codec, as Envoy receives it). Rows that belong to later
// issues (ext_authz, identity headers) are asserted where they exist and listed below otherwise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../../src/config/parse-config.js';
import { translate } from '../../../src/translate/translate.js';
import { compile } from '../../../src/xds/compile/compile.js';
import { renderResources } from '../../../src/proto/render.js';
import { encodeMessage } from '../../../src/proto/codec.js';
import { buildBootstrap } from '../../../src/envoy/bootstrap.js';
import { TEST_GRPC_CREDENTIAL } from '../../support/grpc-credential.js';
import { SIGN_IN } from '../../support/sign-in-config.js';
import { TEST_INTERNAL } from '../../support/internal-endpoints.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function render(document: Record<string, unknown>): {
  listener: Json;
  hcm: Json;
  routes: Json;
  /** Each RouteConfiguration as compiled (one per host under per-host delivery). */
  tables: Json[];
  clusters: Json[];
  compiledRoutes: Json;
} {
  const parsed = parseConfig({ document: { ...SIGN_IN, ...document }, env: {}, readText: () => '' });
  assert.deepEqual(parsed.problems, []);
  assert.ok(parsed.config);
  const { ir } = translate(parsed.config, {
    systemCaFile: '/etc/ssl/certs/ca-certificates.crt',
    internal: TEST_INTERNAL,
  });
  assert.ok(ir);
  const compiled = compile(ir);
  const rendered = renderResources(compiled) as unknown as Record<string, Json[]>;
  const listener = rendered.listeners?.[0] as Json;
  const hcm = listener.filter_chains[0].filters[0].typed_config as Json;
  // Per-host delivery splits the virtual hosts over one RouteConfiguration each (named by a scope);
  // the rows below hold for every one of them, so they are checked as one table.
  const merged = (configs: Json[]): Json => ({
    ...configs[0],
    virtual_hosts: configs.flatMap((config) => config.virtual_hosts as Json[]),
  });
  return {
    listener,
    hcm,
    routes: merged(rendered.routes as Json[]),
    tables: rendered.routes as Json[],
    clusters: rendered.clusters as Json[],
    compiledRoutes: merged(
      compiled['envoy.config.route.v3.RouteConfiguration'].map((resource) => resource.message as Json),
    ),
  };
}

const config = {
  insecure_server: true,
  address: ':8080',
  routes: [
    { from: 'https://app.example.test', to: 'http://10.0.0.1:8080' },
    { from: 'https://ws.example.test', to: 'http://10.0.0.2:8080', allow_websockets: true },
    {
      from: 'https://public.example.test',
      to: 'http://10.0.0.3:8080',
      allow_public_unauthenticated_access: true,
    },
  ],
};
const rendered = render(config);
const { listener, hcm, routes, clusters } = rendered;

test('paths are normalized, slashes merged, escaped slashes rejected', () => {
  assert.equal(hcm.normalize_path, true);
  assert.equal(hcm.merge_slashes, true);
  assert.equal(hcm.path_with_escaped_slashes_action, 'REJECT_REQUEST');
});

test('header names with underscores are rejected', () => {
  assert.equal(hcm.common_http_protocol_options.headers_with_underscores_action, 'REJECT_REQUEST');
});

test('X-Forwarded-For trust is explicit and internal addresses are loopback only', () => {
  assert.equal(hcm.use_remote_address, true);
  assert.equal(hcm.xff_num_trusted_hops ?? 0, 0);
  const ranges = hcm.internal_address_config.cidr_ranges.map(
    (range: Json) => `${range.address_prefix}/${range.prefix_len}`,
  );
  assert.deepEqual(ranges, ['127.0.0.1/32', '::1/128']);
});

test('host trailing dots are stripped; the port is kept, and hosts match ignoring it', () => {
  assert.equal(hcm.strip_trailing_host_dot, true);
  assert.equal(hcm.strip_any_host_port, undefined, 'ext_authz sees the port the client sent');
  for (const table of rendered.tables) assert.equal(table.ignore_port_in_host_matching, true, table.name);
  // Per-host scopes key on the host part of :authority.
  assert.deepEqual(hcm.scoped_routes.scope_key_builder.fragments, [
    { header_value_extractor: { name: ':authority', element_separator: ':', index: 0 } },
  ]);
});

test('header size and count are bounded', () => {
  assert.ok(hcm.max_request_headers_kb > 0 && hcm.max_request_headers_kb <= 96);
  assert.ok(hcm.common_http_protocol_options.max_headers_count <= 100);
});

test('request header, stream idle and request timeouts are set', () => {
  assert.equal(hcm.request_headers_timeout, '10s');
  assert.equal(hcm.stream_idle_timeout, '300s');
  assert.equal(hcm.request_timeout, '30s');
});

test('HTTP/2 streams and windows are bounded', () => {
  assert.equal(hcm.http2_protocol_options.max_concurrent_streams, 100);
  assert.equal(hcm.http2_protocol_options.initial_stream_window_size, 65536);
  assert.equal(hcm.http2_protocol_options.initial_connection_window_size, 1048576);
});

test('HTTP/1.0 is refused', () => {
  assert.notEqual(hcm.http_protocol_options?.accept_http_10, true);
});

test('upgrades: only websocket, only on routes that allow it; no connection-manager-wide upgrades', () => {
  assert.equal(hcm.upgrade_configs, undefined);
  const vhosts = routes.virtual_hosts as Json[];
  const upgrades = (host: string): unknown =>
    vhosts
      .find((vhost) => vhost.name === host)
      ?.routes.find((route: Json) => route.route !== undefined && route.name !== undefined).route
      .upgrade_configs;
  assert.deepEqual(upgrades('ws.example.test'), [{ upgrade_type: 'websocket' }]);
  assert.equal(upgrades('app.example.test'), undefined);
});

test('no route ignores path parameters and no route accepts CONNECT', () => {
  const text = JSON.stringify(routes);
  assert.ok(!text.includes('ignore_path_parameters_in_path_matching'));
  assert.ok(!text.includes('connect_matcher'));
  assert.ok(!text.includes('CONNECT'));
});

test('listener and cluster connection buffers are 32 KiB', () => {
  assert.equal(listener.per_connection_buffer_limit_bytes, 32768);
  for (const cluster of clusters) assert.equal(cluster.per_connection_buffer_limit_bytes, 32768);
});

test('ext_authz runs between the two strips, after the host-case filter, fails closed with 503, over gRPC with a timeout, no body', () => {
  const names = hcm.http_filters.map((filter: Json) => filter.name);
  // Host case first: under per-host routes it may lower-case the host and re-route a request that
  // found no scope, and ext_authz must see the route Envoy finally picked (CVE-2023-33189). The
  // identity strip runs before ext_authz (whose assertion must survive), the credential strip
  // after it (ext_authz must read the credentials) and right before the router. Between the
  // identity strip and ext_authz, the fast path's jwt_authn and shadow RBAC (docs/fast-path.md;
  // the default decision_token_lifetime is on): ext_authz runs unless the shadow RBAC allowed.
  assert.deepEqual(names, [
    'portcullis.host_case',
    'portcullis.strip_identity_headers',
    'envoy.filters.http.jwt_authn',
    'portcullis.fast_path',
    'envoy.filters.http.ext_authz',
    'portcullis.strip_credentials',
    'envoy.filters.http.router',
  ]);
  const extAuthz = hcm.http_filters[4].typed_config;
  assert.equal(extAuthz.filter_enabled_metadata.invert, true);
  assert.equal(extAuthz.failure_mode_allow ?? false, false);
  assert.equal(extAuthz.status_on_error.code, 'ServiceUnavailable');
  assert.equal(extAuthz.grpc_service.envoy_grpc.cluster_name, 'portcullis-authorize');
  assert.equal(extAuthz.grpc_service.timeout, '10s');
  assert.equal(extAuthz.with_request_body, undefined);
  assert.equal(extAuthz.transport_api_version, 'V3');
  assert.ok(clusters.some((cluster) => cluster.name === 'portcullis-authorize'));
});

test('the host-case Lua filter runs only on a request no per-host scope matched', () => {
  const lua = hcm.http_filters[0].typed_config;
  assert.match(
    lua.default_source_code.inline_string,
    /string\.lower\(host\)/,
    'per-host: lower-cases a host',
  );
  assert.match(lua.default_source_code.inline_string, /clearRouteCache\(\)/, 'then routes it again');
  assert.ok(rendered.tables.length > 1, 'per-host delivery');
  for (const table of rendered.tables) {
    assert.equal(table.typed_per_filter_config?.['portcullis.host_case']?.disabled, true, table.name);
  }
  const single = render({ ...config, routes: [{ from: 'https://*.wild.test', to: 'http://10.0.0.1:8080' }] });
  assert.ok(
    !single.hcm.http_filters.some((filter: Json) => filter.name === 'portcullis.host_case'),
    'no host-case filter with one route table',
  );
  assert.equal(single.routes.typed_per_filter_config, undefined);
});

test('the credential strips run on every request: no route, virtual host or table can switch them off', () => {
  // Per-route config is found by filter name: neither the strips' names nor their extension name
  // `envoy.filters.http.lua` may appear as a per-filter config key anywhere.
  const forbidden = [
    'portcullis.strip_identity_headers',
    'portcullis.strip_credentials',
    'envoy.filters.http.lua',
  ];
  const wild = render({
    ...config,
    routes: [
      ...config.routes,
      { from: 'https://*.wild.test', to: 'http://10.0.0.1:8080', allow_public_unauthenticated_access: true },
    ],
  });
  for (const { hcm: manager, tables } of [rendered, wild]) {
    for (const name of forbidden.slice(0, 2)) {
      const filter = manager.http_filters.find((entry: Json) => entry.name === name);
      assert.ok(filter, name);
      assert.equal(filter.disabled, undefined, `${name} is on by default`);
      assert.ok(
        filter.typed_config.default_source_code.inline_string.length > 0,
        `${name} runs its code on every request`,
      );
    }
    const text = JSON.stringify(tables);
    for (const name of forbidden) assert.ok(!text.includes(`"${name}"`), `no per-route config for ${name}`);
  }
  const identity = rendered.hcm.http_filters[1].typed_config.default_source_code.inline_string;
  assert.match(identity, /local PREFIX = "x-portcullis-"/);
  const credentials = rendered.hcm.http_filters[5].typed_config.default_source_code.inline_string;
  assert.match(credentials, /local COOKIE = "_portcullis"/);
  assert.match(credentials, /local SCHEME = "portcullis"/);
});

test('rewrite_response_headers adds its filter between ext_authz and the credential strip, run only on routes with rules', () => {
  assert.ok(!JSON.stringify(rendered).includes('portcullis.rewrite_response_headers'), 'no rules, no filter');
  const rewriting = render({
    ...config,
    routes: [
      ...config.routes,
      {
        from: 'https://rewrite.example.test',
        to: 'http://10.0.0.4:8080',
        rewrite_response_headers: [{ header: 'Location', prefix: 'http://internal/', value: '/' }],
      },
    ],
  });
  const names = rewriting.hcm.http_filters.map((filter: Json) => filter.name);
  assert.deepEqual(names.slice(-4), [
    'envoy.filters.http.ext_authz',
    'portcullis.rewrite_response_headers',
    'portcullis.strip_credentials',
    'envoy.filters.http.router',
  ]);
  const filter = rewriting.hcm.http_filters[names.indexOf('portcullis.rewrite_response_headers')];
  assert.equal(filter.typed_config.default_source_code, undefined, 'no code runs on a route without rules');
  assert.ok(!filter.typed_config.source_codes.rewrite.inline_string.includes('internal'), 'rules are data');
  const carrying = rewriting.tables.flatMap((table) =>
    (table.virtual_hosts as Json[]).flatMap((vhost) =>
      (vhost.routes as Json[]).filter(
        (route) => route.typed_per_filter_config?.['portcullis.rewrite_response_headers'] !== undefined,
      ),
    ),
  );
  assert.equal(carrying.length, 1, 'only the route with rules runs the script');
  assert.equal(carrying[0]?.typed_per_filter_config['portcullis.rewrite_response_headers'].name, 'rewrite');
  const text = JSON.stringify(rewriting.tables);
  for (const name of [
    'portcullis.strip_identity_headers',
    'portcullis.strip_credentials',
    'envoy.filters.http.lua',
  ])
    assert.ok(!text.includes(`"${name}"`), `no per-route config for ${name}`);
});

test('every protected route names itself to ext_authz with a unique route id; public routes skip it', () => {
  const routesOf = (host: string): Json[] =>
    (routes.virtual_hosts as Json[]).find((vhost) => vhost.name === host)?.routes;
  const ids = new Set<string>();
  for (const host of ['app.example.test', 'ws.example.test']) {
    const route = routesOf(host).find(
      (entry) => entry.route !== undefined && entry.name !== undefined,
    ) as Json;
    const id =
      route.typed_per_filter_config['envoy.filters.http.ext_authz'].check_settings.context_extensions
        .route_id;
    assert.match(id, /^[0-9a-f]{16}$/);
    ids.add(id);
  }
  assert.equal(ids.size, 2);
  const publicRoute = routesOf('public.example.test').find(
    (entry) => entry.route !== undefined && entry.name !== undefined,
  ) as Json;
  assert.equal(publicRoute.typed_per_filter_config['envoy.filters.http.ext_authz'].disabled, true);
  assert.ok(
    publicRoute.request_headers_to_remove.includes('x-portcullis-jwt-assertion'),
    'public routes strip identity headers',
  );
});

test('every virtual host starts with the tiny JWKS route that ext_authz answers, then /.portcullis/ to Portcullis', () => {
  const hosts = routes.virtual_hosts as Json[];
  for (const vhost of hosts) {
    const [first, second] = vhost.routes;
    assert.equal(first.match.path, '/.well-known/portcullis/jwks.json');
    assert.equal(first.typed_per_filter_config, undefined, 'ext_authz runs (and answers) on it');
    assert.equal(first.route.cluster, 'portcullis-authorize');
    assert.equal(second.typed_per_filter_config, undefined, 'ext_authz runs with no route id');
    assert.equal(second.route.cluster, 'portcullis-http');
    assert.equal(second.route.timeout, '30s');
  }
  // The authenticate host: every path of it goes to Portcullis, and nothing else is on it.
  const authenticate = hosts.find((vhost) => vhost.name === 'authenticate.example.com');
  assert.deepEqual(authenticate?.domains, ['authenticate.example.com']);
  assert.deepEqual(
    authenticate?.routes.map((route: Json) => route.match),
    [{ path: '/.well-known/portcullis/jwks.json' }, { prefix: '/' }],
  );
  for (const vhost of hosts.filter((host) => host !== authenticate))
    assert.deepEqual(vhost.routes[1].match, { prefix: '/.portcullis/' }, vhost.name);
});

test('the HTTP server of Portcullis is a STATIC HTTP/1.1 cluster with a 1 s connect timeout', () => {
  const cluster = rendered.clusters.find((entry) => entry.name === 'portcullis-http') as Json;
  assert.equal(cluster.type, 'STATIC');
  assert.equal(cluster.connect_timeout, '1s');
  assert.deepEqual(cluster.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address, {
    address: '127.0.0.1',
    port_value: 5080,
  });
  const options = cluster.typed_extension_protocol_options[
    'envoy.extensions.upstreams.http.v3.HttpProtocolOptions'
  ] as Json;
  assert.deepEqual(options.explicit_http_config, { http_protocol_options: {} });
});

test('the route table stays small: under 4 MiB at 10,000 protected routes', () => {
  const many = render({
    ...config,
    routes: Array.from({ length: 10_000 }, (_, i) => ({
      from: `https://app-${i}.example.test`,
      to: [`http://10.${i >> 8}.${i & 255}.1:8080,3`, `http://10.${i >> 8}.${i & 255}.2:8080,1`],
      allow_any_authenticated_user: true,
    })),
  });
  const bytes = encodeMessage('envoy.config.route.v3.RouteConfiguration', many.compiledRoutes).length;
  assert.ok(bytes < 4 * 1024 * 1024, `${bytes} bytes on the wire`);
});

test('use_proxy_protocol adds the proxy_protocol listener filter first', () => {
  const withProxy = render({ ...config, use_proxy_protocol: true, xff_num_trusted_hops: 1 });
  assert.equal(withProxy.listener.listener_filters[0].name, 'envoy.filters.listener.proxy_protocol');
  assert.equal(withProxy.hcm.xff_num_trusted_hops, 1);
  assert.equal(listener.listener_filters, undefined);
});

test('the admin interface is loopback only and an overload manager guards the heap', () => {
  const bootstrap = buildBootstrap({
    ads: { address: '127.0.0.1', port: 5443, credential: TEST_GRPC_CREDENTIAL },
  }) as Json;
  assert.match(bootstrap.admin.address.socket_address.address, /^127\./);
  const actions = bootstrap.overload_manager.actions.map((action: Json) => action.name);
  assert.ok(actions.includes('envoy.overload_actions.stop_accepting_requests'));
  assert.throws(
    () =>
      buildBootstrap({
        ads: { address: '127.0.0.1', port: 5443, credential: TEST_GRPC_CREDENTIAL },
        admin: { address: '0.0.0.0' },
      }),
    /loopback/,
  );
});

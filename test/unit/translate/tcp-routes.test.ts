// TCP routes from config to Envoy resources (issue 27): the plain and bastion `from` forms and what
// is refused; translate places the route in its CONNECT host's virtual host (and the bastion host's),
// with timeouts off and a plain TCP cluster; compile gives only that route CONNECT, matched on the
// exact authority; sign-in locates a TCP route host only under /.portcullis/.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../../src/config/parse-config.js';
import { connectAuthority } from '../../../src/config/parse-url.js';
import type { Config } from '../../../src/config/types.js';
import { translate, type TranslateResult } from '../../../src/translate/translate.js';
import type { IR } from '../../../src/ir/types.js';
import { compile } from '../../../src/xds/compile/compile.js';
import { CLUSTER_TYPE, ROUTE_CONFIGURATION_TYPE } from '../../../src/proto/type-urls.js';
import { createRouteLocator } from '../../../src/authenticate/route-locator.js';
import { SIGN_IN } from '../../support/sign-in-config.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Envoy resources as JSON trees, read by path
type Json = Record<string, any>;

function parsed(routes: readonly Record<string, unknown>[]): { config?: Config; problems: string[] } {
  const result = parseConfig({
    document: { ...SIGN_IN, insecure_server: true, address: ':8080', routes },
    env: {},
    readText: () => '',
  });
  return {
    ...(result.config === undefined ? {} : { config: result.config }),
    problems: result.problems.map((problem) => `${problem.path}: ${problem.message}`),
  };
}

function translated(routes: readonly Record<string, unknown>[]): TranslateResult {
  const { config, problems } = parsed(routes);
  assert.ok(config, problems.join('\n'));
  return translate(config, { systemCaFile: '/ca.pem' });
}

function irOf(routes: readonly Record<string, unknown>[]): IR {
  const result = translated(routes);
  assert.deepEqual(result.problems, []);
  assert.ok(result.ir);
  return result.ir;
}

const INTERNAL = {
  authorize: { host: '127.0.0.1', port: 1 },
  authorizeTimeoutMs: 1000,
  jwksJson: '{}',
  decisionJwksJson: '{"keys":[]}',
  authorizeCredential: 'credential',
  http: { host: '127.0.0.1', port: 2 },
};

/** Every Envoy route of every route configuration, by the virtual host it is in. */
function envoyRoutes(ir: IR): Map<string, Json[]> {
  const out = new Map<string, Json[]>();
  const resources = compile({ ...ir, internal: INTERNAL })[ROUTE_CONFIGURATION_TYPE];
  for (const { message } of resources)
    for (const vhost of (message as Json).virtual_hosts as Json[]) out.set(vhost.name, vhost.routes);
  return out;
}

const tcp = (
  from: string,
  to: unknown = 'tcp://10.0.0.5:5432',
  extra: Record<string, unknown> = {},
): Json => ({
  from,
  to,
  ...extra,
});

test('the plain and bastion forms parse; the CONNECT authority is the host:port or the path', () => {
  const { config, problems } = parsed([
    tcp('tcp+https://DB.example.com:5432'),
    tcp('tcp+https://bastion.example.com/DB.Internal:22'),
    tcp('tcp+https://bastion.example.com:8443/10.0.0.9:22/'),
  ]);
  assert.deepEqual(problems, []);
  assert.deepEqual(
    config?.routes.map((route) => [route.from_host, connectAuthority(route.from)]),
    [
      ['db.example.com', { host: 'db.example.com', port: 5432 }],
      ['bastion.example.com', { host: 'db.internal', port: 22 }],
      ['bastion.example.com', { host: '10.0.0.9', port: 22 }],
    ],
  );
});

test('TCP from-URLs that name no single CONNECT target are refused, saying the forms', () => {
  const cases: [string, RegExp][] = [
    ['tcp+https://db.example.com', /needs the port clients connect to/],
    ['tcp+https://bastion.example.com/db.internal', /bastion target needs a port/],
    ['tcp+https://bastion.example.com/a:1/b:2', /one target clients CONNECT to/],
    ['tcp+https://bastion.example.com/a:1?x=1', /query or fragment/],
    ['tcp+https://*.example.com:5432', /cannot be a wildcard/],
    ['tcp+https://bastion.example.com/*.internal:22', /cannot be a wildcard/],
  ];
  for (const [from, message] of cases) {
    const fromProblems = parsed([tcp(from)]).problems.filter((problem) =>
      problem.startsWith('routes[0].from'),
    );
    assert.equal(fromProblems.length, 1, `${from}: ${fromProblems.join('; ')}`);
    assert.match(fromProblems[0] ?? '', message, from);
  }
});

test('translate: the route sits in its CONNECT host, timeouts off unless set, a TCP cluster', () => {
  const ir = irOf([
    tcp('tcp+https://db.example.com:5432', 'tcp://10.0.0.5:5432'),
    { from: 'https://db.example.com', to: 'http://10.0.0.1:80' },
    tcp('tcp+https://bastion.example.com/db.internal:22', ['tcp://db.internal:22,3', 'tcp://10.0.0.7:22,1'], {
      idle_timeout: '1h',
      health_checks: [
        { timeout: '1s', interval: '5s', unhealthy_threshold: 2, healthy_threshold: 1, tcp_health_check: {} },
      ],
      outlier_detection: { consecutive_5xx: 3 },
    }),
  ]);
  const hosts = ir.virtualHosts.map((vhost) => [
    vhost.name,
    vhost.routes.map((route) => route.tcpAuthority ?? 'http'),
  ]);
  assert.deepEqual(hosts, [
    ['bastion.example.com', ['db.internal:22']],
    ['db.example.com', ['db.example.com:5432', 'http']],
    ['db.internal', ['db.internal:22']],
  ]);
  const [plain, bastion] = [ir.virtualHosts[1]?.routes[0], ir.virtualHosts[2]?.routes[0]];
  assert.ok(plain && bastion);
  assert.deepEqual([plain.timeoutMs, plain.idleTimeoutMs], [0, 0]);
  assert.deepEqual([bastion.timeoutMs, bastion.idleTimeoutMs], [0, 3_600_000]);
  assert.equal(plain.passIdentityHeaders, false);
  assert.equal(ir.clusters.length, 3, 'one cluster per route, the bastion one once');
  const cluster = ir.clusters.find((candidate) => candidate.name === bastion.clusterName);
  assert.ok(cluster);
  assert.equal(cluster.upstreamProtocol, 'tcp');
  assert.deepEqual(
    cluster.endpoints.map(({ host, port, weight }) => [host, port, weight]),
    [
      ['db.internal', 22, 3],
      ['10.0.0.7', 22, 1],
    ],
  );
  assert.equal(cluster.healthChecks.length, 1);
  assert.deepEqual(cluster.outlierDetection, { consecutive_5xx: 3 });
});

test('translate refuses HTTP health checks, a second route to one target, and the authenticate host', () => {
  const result = translated([
    tcp('tcp+https://db.example.com:5432', 'tcp://10.0.0.5:5432', {
      health_checks: [
        {
          timeout: '1s',
          interval: '5s',
          unhealthy_threshold: 2,
          healthy_threshold: 1,
          http_health_check: { path: '/' },
        },
      ],
    }),
    tcp('tcp+https://bastion.example.com/db.example.com:5432'),
    tcp('tcp+https://db.example.com:5433'),
    tcp('tcp+https://bastion.example.com/authenticate.example.com:22'),
  ]);
  assert.equal(result.ir, undefined);
  assert.deepEqual(
    result.problems.map((problem) => [problem.path, problem.message.split(/[:(]/)[0]]),
    [
      ['routes[0].health_checks[0]', 'a TCP route takes tcp_health_check only '],
      ['routes[1]', 'never matches'],
      [
        'routes[3]',
        'from host authenticate.example.com is the authenticate_service_url host, which Portcullis answers itself ',
      ],
    ],
  );
});

test('compile: only TCP routes take CONNECT, on the exact authority, to a cluster without HTTP options', () => {
  const ir = irOf([
    tcp('tcp+https://db.example.com:5432'),
    { from: 'https://db.example.com', to: 'http://10.0.0.1:80', allow_websockets: true },
  ]);
  const routes = envoyRoutes(ir).get('db.example.com');
  assert.ok(routes);
  const tcpRoute = routes.find((route) => route.match.connect_matcher !== undefined);
  assert.deepEqual(tcpRoute?.match, {
    connect_matcher: {},
    headers: [{ name: ':authority', string_match: { exact: 'db.example.com:5432', ignore_case: true } }],
  });
  assert.deepEqual(tcpRoute?.route.upgrade_configs, [{ upgrade_type: 'CONNECT', connect_config: {} }]);
  assert.deepEqual(
    [tcpRoute?.route.timeout, tcpRoute?.route.idle_timeout],
    [
      { seconds: 0, nanos: 0 },
      { seconds: 0, nanos: 0 },
    ],
  );
  assert.ok(tcpRoute?.typed_per_filter_config, 'ext_authz runs with the route id');
  const connectElsewhere = routes.filter(
    (route) => route !== tcpRoute && JSON.stringify(route).includes('CONNECT'),
  );
  assert.deepEqual(connectElsewhere, [], 'no other route enables CONNECT');
  const clusters = compile({ ...ir, internal: INTERNAL })[CLUSTER_TYPE];
  const tcpCluster = clusters.find((cluster) => cluster.name === tcpRoute?.route.cluster);
  assert.ok(tcpCluster);
  assert.equal((tcpCluster.message as Json).typed_extension_protocol_options, undefined);
});

test('sign-in locates a TCP route (and its bastion host) only under /.portcullis/', () => {
  const ir = irOf([
    tcp('tcp+https://db.example.com:5432'),
    tcp('tcp+https://bastion.example.com/db.internal:22'),
  ]);
  const locator = createRouteLocator(ir);
  const [plain, bastion] = [ir.virtualHosts[1]?.routes[0]?.id, ir.virtualHosts[0]?.routes[0]?.id];
  assert.ok(plain && bastion);
  assert.equal(locator.locate(new URL('https://db.example.com/.portcullis/api/v1/login'))?.routeId, plain);
  assert.equal(locator.locate(new URL('https://bastion.example.com/.portcullis/callback'))?.routeId, bastion);
  assert.equal(locator.locate(new URL('https://db.example.com/')), undefined, 'no open redirect to it');
  assert.equal(locator.locate(new URL('https://bastion.example.com/app')), undefined);
});

test("sign-in hands a TCP route's session to the listener's port, or the bastion URL's own port", () => {
  const ir = irOf([
    tcp('tcp+https://db.example.com:5432'),
    tcp('tcp+https://bastion.example.com:8443/db.internal:22'),
  ]);
  const locator = createRouteLocator(ir);
  const at = (url: string): string | undefined => locator.locate(new URL(url))?.origin;
  // The CONNECT port (5432) is only a name: Portcullis serves the host where users reach its
  // listener (plain on :8080, behind https://authenticate.example.com's load balancer).
  assert.equal(at('https://db.example.com:5432/.portcullis/api/v1/login'), 'https://db.example.com');
  assert.equal(locator.serves(new URL('http://db.example.com:8080')), true);
  assert.equal(at('https://bastion.example.com/.portcullis/api/v1/login'), 'http://bastion.example.com:8443');
  assert.equal(locator.serves(new URL('https://db.example.com:5432')), false);
  assert.equal(locator.serves(new URL('http://db.example.com:5432')), false);
});

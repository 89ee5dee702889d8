// A route's id (and the cluster it names) comes from what Envoy matches the route on, never from
// its upstreams: every change that leaves the match alone keeps both names, so Envoy updates the
// cluster in place or through EDS instead of swapping clusters under traffic (issue 28).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../../src/config/parse-config.js';
import type { Config, RouteSettings } from '../../../src/config/types.js';
import type { IR, IRRoute } from '../../../src/ir/types.js';
import { routeIdentity } from '../../../src/translate/route-identity.js';
import { translate } from '../../../src/translate/translate.js';
import { shortHash } from '../../../src/shared/hash.js';
import { SIGN_IN } from '../../support/sign-in-config.js';

type RouteDoc = Record<string, unknown>;

function parse(routes: readonly RouteDoc[]): Config {
  const config = parseConfig({
    document: { ...SIGN_IN, insecure_server: true, address: ':8080', routes },
    env: {},
    readText: () => '',
  }).config;
  assert.ok(config, 'the routes parse');
  return config;
}

function irOf(routes: readonly RouteDoc[]): IR {
  const result = translate(parse(routes), { systemCaFile: '/ca.pem' });
  assert.deepEqual(result.problems, []);
  assert.ok(result.ir);
  return result.ir;
}

/** The IR route from `routes[index]`, and its cluster (which must exist under the route's name). */
function routeAt(ir: IR, index: number): { route: IRRoute; cluster: string } {
  const route = ir.virtualHosts
    .flatMap((host) => host.routes)
    .find((r) => r.sourcePath === `routes[${index}]`);
  assert.ok(route, `routes[${index}] is in the IR`);
  const cluster = ir.clusters.find((c) => c.name === route.clusterName);
  assert.ok(cluster, `its cluster ${route.clusterName} is in the IR`);
  return { route, cluster: cluster.name };
}

test('the identity text is what Envoy matches: host and path matcher, or TCP host and port', () => {
  const cases: [RouteDoc, string][] = [
    [{ from: 'https://a.example.com', to: 'http://10.0.0.1:8080' }, '{"host":"a.example.com","prefix":"/"}'],
    [
      { from: 'http://A.Example.com:8443', prefix: '/', to: 'http://x.test' },
      '{"host":"a.example.com","prefix":"/"}',
    ],
    [
      { from: 'https://b.example.com', prefix: '/api/', to: 'http://10.0.0.1,3' },
      '{"host":"b.example.com","prefix":"/api/"}',
    ],
    [
      { from: 'https://*.example.com', path: '/exact "q" \u00e9\\', to: 'http://10.0.0.2' },
      '{"host":"*.example.com","path":"/exact \\"q\\" \u00e9\\\\"}',
    ],
    [
      { from: 'https://c.example.com', regex: '^/v[0-9]+/caf%C3%A9$', to: 'h2c://10.0.0.3' },
      '{"host":"c.example.com","regex":"^/v[0-9]+/caf%C3%A9$"}',
    ],
    [{ from: 'tcp+https://DB.example.com:5432', to: 'tcp://10.0.0.9:5432' }, '{"tcp":"db.example.com:5432"}'],
    [
      { from: 'https://r.example.com', redirect: { https_redirect: true } },
      '{"answer":"redirect","host":"r.example.com","prefix":"/"}',
    ],
    [
      { from: 'https://s.example.com', path: '/x', response: { status: 200, body: 'ok' } },
      '{"answer":"response","host":"s.example.com","path":"/x"}',
    ],
  ];
  const config = parse(cases.map(([route]) => route));
  cases.forEach(([, text], index) => {
    const identity = routeIdentity(config.routes[index] as RouteSettings);
    assert.equal(identity.text, text, `routes[${index}]`);
    assert.equal(identity.id, shortHash(text), 'the id hashes exactly that text');
    assert.match(identity.id, /^[0-9a-f]{16}$/);
  });
  const [redirect, response] = config.routes.slice(-2).map((route) => routeIdentity(route));
  assert.equal(
    redirect?.matchKey,
    '{"host":"r.example.com","prefix":"/"}',
    'the answer is not part of the match',
  );
  assert.equal(response?.matchKey, '{"host":"s.example.com","path":"/x"}');
});

const BASE: RouteDoc = {
  from: 'https://app.example.com',
  prefix: '/api/',
  to: ['http://10.0.0.1:8080,3', 'http://10.0.0.2:8080,1'],
};

test('a route keeps its id and cluster name through every change that leaves its match alone', () => {
  const before = routeAt(irOf([BASE]), 0);
  const check = {
    timeout: '1s',
    interval: '2s',
    unhealthy_threshold: 2,
    healthy_threshold: 1,
    http_health_check: { path: '/healthz' },
  };
  const changes: [string, RouteDoc][] = [
    ['weights 3:1 to 1:3', { ...BASE, to: ['http://10.0.0.1:8080,1', 'http://10.0.0.2:8080,3'] }],
    ['an endpoint replaced', { ...BASE, to: ['http://10.0.0.1:8080,3', 'http://10.0.0.7:9090,1'] }],
    ['a destination added', { ...BASE, to: [...(BASE.to as string[]), 'http://10.0.0.3:8080,2'] }],
    ['a destination removed', { ...BASE, to: 'http://10.0.0.1:8080' }],
    ['IP to DNS upstreams', { ...BASE, to: 'https://backend.internal' }],
    ['a health check added', { ...BASE, health_checks: [check] }],
    ['outlier detection', { ...BASE, outlier_detection: { consecutive_5xx: 3 } }],
    ['load balancing', { ...BASE, load_balancing_policy: 'LEAST_REQUEST' }],
    ['policy', { ...BASE, allowed_users: ['alice@example.com'] }],
    ['public', { ...BASE, allow_public_unauthenticated_access: true }],
    ['timeouts', { ...BASE, timeout: '5s', idle_timeout: '1m' }],
    ['headers', { ...BASE, set_request_headers: { 'X-A': 'b' }, remove_request_headers: ['X-C'] }],
    ['a rewrite', { ...BASE, prefix_rewrite: '/v2/' }],
  ];
  const baseline = JSON.stringify(irOf([BASE]));
  for (const [what, changed] of changes) {
    // Other routes added before it and after it move it in the list: its name stays.
    const ir = irOf([
      { from: 'https://other.example.com', to: 'http://10.0.9.9' },
      changed,
      { ...BASE, prefix: '/z/' },
    ]);
    assert.notEqual(JSON.stringify(irOf([changed])), baseline, `${what}: the change reaches the IR`);
    const after = routeAt(ir, 1);
    assert.equal(after.route.id, before.route.id, `${what}: same route id`);
    assert.equal(after.cluster, before.cluster, `${what}: same cluster name`);
  }
  const otherFrom = { ...BASE, from: 'http://App.example.com:8443' };
  // Only sign-in reads from's port (where users reach the route: fromPort); the id ignores it.
  assert.equal(
    JSON.stringify(irOf([otherFrom])).replace('"fromPort":8443,', ''),
    baseline,
    "Envoy ignores from's scheme and port: so does the IR, but for the port sign-in may redirect to",
  );
  assert.equal(before.cluster, `route-${before.route.id}`);
});

test('a change to what the route matches gives it a new id and cluster name', () => {
  const before = routeAt(irOf([BASE]), 0);
  const changes: [string, RouteDoc][] = [
    ['another prefix', { ...BASE, prefix: '/api/v2/' }],
    ['a path instead', { ...BASE, prefix: undefined, path: '/api/' }],
    ['a regex instead', { ...BASE, prefix: undefined, regex: '/api/.*' }],
    ['another host', { ...BASE, from: 'https://app2.example.com' }],
    ['a wildcard host', { ...BASE, from: 'https://*.example.com' }],
  ];
  const seen = new Set([before.route.id]);
  for (const [what, changed] of changes) {
    const after = routeAt(irOf([changed]), 0);
    assert.ok(!seen.has(after.route.id), `${what}: a new route id`);
    assert.equal(after.cluster, `route-${after.route.id}`, `${what}: the cluster follows`);
    seen.add(after.route.id);
  }
});

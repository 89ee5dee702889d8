import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { IR, IRVirtualHost } from '../../../src/ir/types.js';
import { routeScoping } from '../../../src/xds/compile/route-scoping.js';
import { compile } from '../../../src/xds/compile/compile.js';
import { checkConsistency } from '../../../src/xds/snapshot/consistency.js';
import { translate } from '../../../src/translate/translate.js';
import { parseConfig } from '../../../src/config/parse-config.js';
import { buildSnapshot } from '../../../src/xds/snapshot/build-snapshot.js';
import { RESOURCE_TYPES } from '../../../src/proto/type-urls.js';

function irOf(froms: readonly string[]): IR {
  const parsed = parseConfig({
    document: {
      insecure_server: true,
      routes: froms.map((from) => ({
        from,
        to: 'http://127.0.0.1:9',
        allow_public_unauthenticated_access: true,
      })),
    },
    env: {},
    readText: () => '',
  });
  assert.ok(parsed.config, JSON.stringify(parsed.problems));
  const { ir, problems } = translate(parsed.config, { systemCaFile: '/ca.pem' });
  assert.ok(ir, JSON.stringify(problems));
  return ir;
}

const vhost = (domains: string[]): IRVirtualHost => ({ name: domains[0] as string, domains, routes: [] });

test('per-host delivery only when every virtual host is one exact host', () => {
  const ir = irOf(['https://a.test']);
  assert.equal(routeScoping(ir), 'per-host');
  assert.equal(routeScoping({ ...ir, virtualHosts: [] }), 'single', 'no hosts: no scopes to wait for');
  for (const domains of [['*.example.com'], ['example.*'], ['*'], ['a.test', 'b.test']]) {
    assert.equal(
      routeScoping({ ...ir, virtualHosts: [vhost(['a.test']), vhost(domains)] }),
      'single',
      domains.join(),
    );
  }
  assert.equal(routeScoping(irOf(['https://a.test', 'https://*.b.test'])), 'single');
  assert.equal(routeScoping(irOf(['https://a.test', 'https://a.*.b.test'])), 'single', 'catch-all patterns');
});

test('per host: one RouteConfiguration per host and a scope keyed by the host naming it; consistent', () => {
  const compiled = compile(irOf(['https://b.test', 'https://a.test']));
  const scopes = compiled['envoy.config.route.v3.ScopedRouteConfiguration'];
  const tables = compiled['envoy.config.route.v3.RouteConfiguration'];
  assert.deepEqual(
    scopes.map((scope) => [scope.name, scope.message]),
    [
      [
        'ingress/a.test',
        {
          name: 'ingress/a.test',
          route_configuration_name: 'ingress/a.test',
          key: { fragments: [{ string_key: 'a.test' }] },
        },
      ],
      [
        'ingress/b.test',
        {
          name: 'ingress/b.test',
          route_configuration_name: 'ingress/b.test',
          key: { fragments: [{ string_key: 'b.test' }] },
        },
      ],
    ],
    'scopes carry names only, so the whole list (which SotW sends at once) stays small',
  );
  assert.deepEqual(
    tables.map((table) => [
      table.name,
      (table.message as { virtual_hosts: { domains: string[] }[] }).virtual_hosts.map(
        (vhost) => vhost.domains,
      ),
    ]),
    [
      ['ingress/a.test', [['a.test']]],
      ['ingress/b.test', [['b.test']]],
    ],
  );
  assert.deepEqual(checkConsistency(compiled), []);
  const clusters = compiled['envoy.config.cluster.v3.Cluster'];
  const broken = { ...compiled, 'envoy.config.cluster.v3.Cluster': clusters.slice(0, 1) };
  assert.match(checkConsistency(broken)[0]?.message ?? '', /route points at unknown cluster route-/);
  const orphaned = { ...compiled, 'envoy.config.route.v3.RouteConfiguration': tables.slice(1) };
  assert.deepEqual(checkConsistency(orphaned), [
    { path: 'scopes.ingress/a.test', message: 'scope references unknown route configuration ingress/a.test' },
  ]);
});

test('a second compile of the same IR gives equal scopes and tables under the same content keys', () => {
  const ir = irOf(['https://a.test', 'https://b.test']);
  for (const type of [
    'envoy.config.route.v3.ScopedRouteConfiguration',
    'envoy.config.route.v3.RouteConfiguration',
  ] as const) {
    const first = compile(ir)[type];
    const second = compile(structuredClone(ir))[type];
    assert.equal(first.length, 2);
    assert.deepEqual(second, first, type);
    assert.ok(first.every((resource) => resource.contentKey !== undefined));
  }
  const changed = irOf(['https://a.test', 'https://b.test']);
  const routes = changed.virtualHosts[1]?.routes ?? [];
  const moved = {
    ...changed,
    virtualHosts: [
      changed.virtualHosts[0]!,
      {
        ...changed.virtualHosts[1]!,
        routes: routes.map((route) => ({ ...route, timeoutMs: route.timeoutMs + 1 })),
      },
    ],
  };
  const [a, b] = compile(moved)['envoy.config.route.v3.RouteConfiguration'];
  const [a0, b0] = compile(ir)['envoy.config.route.v3.RouteConfiguration'];
  assert.equal(a?.contentKey, a0?.contentKey, 'an unchanged host keeps its key');
  assert.notEqual(b?.contentKey, b0?.contentKey, 'a changed host gets a new one');
});

test('compile picks the delivery routeScoping names, across a sequence of reloads', () => {
  const SCOPES = 'envoy.config.route.v3.ScopedRouteConfiguration';
  // Reloads: per-host, a wildcard host arrives (single), it leaves (per-host again), a new exact
  // host, a catch-all pattern, no hosts at all, and back.
  const steps = [
    ['https://a.test', 'https://b.test'],
    ['https://a.test', 'https://b.test', 'https://*.c.test'],
    ['https://a.test', 'https://b.test'],
    ['https://a.test', 'https://b.test', 'https://d.test'],
    ['https://a.test', 'https://x.*.y.test'],
    [],
    ['https://a.test'],
  ];
  const scopesAt: (readonly unknown[])[] = [];
  for (const froms of steps) {
    const ir = froms.length === 0 ? { ...irOf(['https://a.test']), virtualHosts: [] } : irOf(froms);
    const scopes = compile(ir)[SCOPES];
    assert.equal(scopes.length > 0 ? 'per-host' : 'single', routeScoping(ir), froms.join());
    if (scopes.length > 0)
      assert.deepEqual(
        scopes.map((scope) => scope.name),
        ir.virtualHosts.map((host) => `ingress/${host.name}`),
      );
    scopesAt.push(scopes);
  }
  // The exact hosts' scopes come back unchanged after the single-table step between them, and a new
  // host's scope joins them.
  assert.deepEqual(scopesAt[2], scopesAt[0]);
  assert.deepEqual(scopesAt[3]?.slice(0, 2), scopesAt[2]);
});

/** `irOf` with authorization on and an authenticate host, as all-in-one compiles it. */
function withAuthenticate(froms: readonly string[], authenticateUrl = 'https://auth.test'): IR {
  const ir = irOf(froms);
  return {
    ...ir,
    authorize: { ...ir.authorize, authenticateUrl },
    internal: {
      authorize: { host: '127.0.0.1', port: 5443 },
      authorizeTimeoutMs: 1000,
      jwksJson: '{"keys":[]}',
      decisionJwksJson: '{"keys":[]}',
      http: { host: '127.0.0.1', port: 5080 },
    },
  };
}

test('the authenticate host gets its own scope and table; its routes and /.portcullis/ go to portcullis-http', () => {
  const compiled = compile(withAuthenticate(['https://a.test']));
  assert.deepEqual(
    compiled['envoy.config.route.v3.ScopedRouteConfiguration'].map((scope) => scope.name),
    ['ingress/a.test', 'ingress/auth.test'],
  );
  const tables = compiled['envoy.config.route.v3.RouteConfiguration'];
  const routesOf = (name: string): unknown =>
    (
      tables.find((table) => table.name === name)?.message as {
        virtual_hosts: { routes: { match: unknown; route: { cluster: string } }[] }[];
      }
    ).virtual_hosts[0]?.routes.map((route) => [route.match, route.route.cluster]);
  assert.deepEqual(routesOf('ingress/auth.test'), [
    [{ path: '/.well-known/portcullis/jwks.json' }, 'portcullis-authorize'],
    [{ prefix: '/' }, 'portcullis-http'],
  ]);
  assert.deepEqual((routesOf('ingress/a.test') as unknown[]).slice(0, 2), [
    [{ path: '/.well-known/portcullis/jwks.json' }, 'portcullis-authorize'],
    [{ prefix: '/.portcullis/' }, 'portcullis-http'],
  ]);
  assert.deepEqual(checkConsistency(compiled), []);
  // The consistency check knows the cluster: a snapshot without it is refused.
  const clusters = compiled['envoy.config.cluster.v3.Cluster'];
  const withoutHttp = {
    ...compiled,
    'envoy.config.cluster.v3.Cluster': clusters.filter((cluster) => cluster.name !== 'portcullis-http'),
  };
  assert.ok(
    checkConsistency(withoutHttp).some((problem) => /unknown cluster portcullis-http/.test(problem.message)),
  );
  // Under one table the authenticate host is one more virtual host.
  const single = compile(withAuthenticate(['https://a.test', 'https://*.b.test']));
  const table = single['envoy.config.route.v3.RouteConfiguration'][0]?.message as {
    virtual_hosts: { name: string }[];
  };
  assert.ok(table.virtual_hosts.some((vhost) => vhost.name === 'auth.test'));
});

test('hosts with a colon of their own (IPv6 literals) are no scope keys: the key is the part before the first colon', () => {
  assert.equal(routeScoping({ ...irOf(['https://a.test']), virtualHosts: [vhost(['[::1]'])] }), 'single');
  assert.equal(routeScoping(withAuthenticate(['https://a.test'], 'https://[::1]:8443')), 'single');
  assert.equal(routeScoping(withAuthenticate(['https://a.test'])), 'per-host');
});

test('each resource has its own content key, so a rebuild from the cache gives the same snapshot', () => {
  const compiled = compile(withAuthenticate(['https://a.test', 'https://b.test']));
  for (const type of RESOURCE_TYPES) {
    const keys = compiled[type].map((resource) => resource.contentKey);
    assert.equal(new Set(keys).size, keys.length, type);
  }
  const cold = buildSnapshot(compiled);
  assert.deepEqual(
    buildSnapshot(compile(withAuthenticate(['https://a.test', 'https://b.test'])), cold.cache).snapshot,
    cold.snapshot,
  );
});

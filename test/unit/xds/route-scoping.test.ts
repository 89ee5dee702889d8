import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { IR, IRVirtualHost } from '../../../src/ir/types.js';
import { routeScoping } from '../../../src/xds/compile/route-scoping.js';
import { compile } from '../../../src/xds/compile/compile.js';
import { checkConsistency } from '../../../src/xds/snapshot/consistency.js';
import { translate } from '../../../src/translate/translate.js';
import { parseConfig } from '../../../src/config/parse-config.js';
import { withBuiltMessages } from '../../../src/xds/compile/lazy-resource.js';

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
  assert.equal(routeScoping(irOf(['https://a.test', 'https://a*b.test'])), 'single', 'catch-all patterns');
});

test('per host: one RouteConfiguration per host and a scope keyed by the host naming it; consistent', () => {
  const compiled = withBuiltMessages(compile(irOf(['https://b.test', 'https://a.test'])));
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

test('a second compile of the same IR reuses every scope and table object (what lets the snapshot skip them)', () => {
  const ir = irOf(['https://a.test', 'https://b.test']);
  for (const type of [
    'envoy.config.route.v3.ScopedRouteConfiguration',
    'envoy.config.route.v3.RouteConfiguration',
  ] as const) {
    const first = compile(ir)[type];
    const second = compile(ir)[type];
    assert.equal(first.length, 2);
    assert.ok(
      first.every((resource, index) => resource === second[index]),
      type,
    );
  }
});

test('compile picks the delivery routeScoping names, checking only new hosts across reloads', () => {
  const SCOPES = 'envoy.config.route.v3.ScopedRouteConfiguration';
  // Reloads: per-host, a wildcard host arrives (single), it leaves (per-host again), a new exact
  // host, a catch-all pattern, no hosts at all, and back.
  const steps = [
    ['https://a.test', 'https://b.test'],
    ['https://a.test', 'https://b.test', 'https://*.c.test'],
    ['https://a.test', 'https://b.test'],
    ['https://a.test', 'https://b.test', 'https://d.test'],
    ['https://a.test', 'https://x*y.test'],
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
  // The exact hosts' records outlive the single-table reload between them (unchanged routes keep
  // their IR objects), and a new host's record joins the old ones.
  assert.deepEqual(scopesAt[2], scopesAt[0]);
  assert.ok(
    scopesAt[2]?.every((scope, index) => scope === scopesAt[0]?.[index]),
    'the same records',
  );
  assert.ok(scopesAt[3]?.[0] === scopesAt[2]?.[0] && scopesAt[3]?.[1] === scopesAt[2]?.[1]);
});

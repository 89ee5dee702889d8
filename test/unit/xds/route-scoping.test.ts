import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { IR, IRVirtualHost } from '../../../src/ir/types.js';
import { routeScoping } from '../../../src/xds/compile/route-scoping.js';
import { compile } from '../../../src/xds/compile/compile.js';
import { checkConsistency } from '../../../src/xds/snapshot/build-snapshot.js';
import { translate } from '../../../src/translate/translate.js';
import { parseConfig } from '../../../src/config/parse-config.js';

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

test('per host: one scope and one RouteConfiguration per host, named ingress/<host>, consistent', () => {
  const compiled = compile(irOf(['https://b.test', 'https://a.test']));
  const scopes = compiled['envoy.config.route.v3.ScopedRouteConfiguration'];
  const routes = compiled['envoy.config.route.v3.RouteConfiguration'];
  assert.deepEqual(
    scopes.map((scope) => [scope.name, scope.message.route_configuration_name, scope.message.key]),
    [
      ['ingress/a.test', 'ingress/a.test', { fragments: [{ string_key: 'a.test' }] }],
      ['ingress/b.test', 'ingress/b.test', { fragments: [{ string_key: 'b.test' }] }],
    ],
  );
  assert.deepEqual(
    routes.map((route) => route.name),
    ['ingress/a.test', 'ingress/b.test'],
  );
  assert.deepEqual(checkConsistency(compiled), []);
  const broken = { ...compiled, 'envoy.config.route.v3.RouteConfiguration': routes.slice(1) };
  assert.match(
    checkConsistency(broken)[0]?.message ?? '',
    /scope references unknown route configuration ingress\/a.test/,
  );
});

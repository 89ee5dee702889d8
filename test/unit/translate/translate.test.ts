// translate is a pure function: shadowed routes reported in config order naming the first; the
// same config gives the same IR whatever was translated before; hosts and clusters sorted by name;
// each route names its identity-provider client; no route may use the authenticate host.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../../src/config/parse-config.js';
import type { Config } from '../../../src/config/types.js';
import { translate } from '../../../src/translate/translate.js';
import type { IR } from '../../../src/ir/types.js';
import { SIGN_IN } from '../../support/sign-in-config.js';
import { identityProviderFor, NO_IDENTITY_PROVIDER } from '../../../src/config/identity-provider.js';

const OPTIONS = { systemCaFile: '/ca.pem' };

function parse(routes: readonly Record<string, unknown>[]): Config {
  const config = parseConfig({
    document: { ...SIGN_IN, insecure_server: true, address: ':8080', routes },
    env: {},
    readText: () => '',
  }).config;
  assert.ok(config, 'the config parses');
  return config;
}

function irOf(config: Config): IR {
  const result = translate(config, OPTIONS);
  assert.deepEqual(result.problems, []);
  assert.ok(result.ir, 'translated');
  return result.ir;
}

const route = (host: string, to = 'http://10.0.0.1:8080', prefix?: string): Record<string, unknown> => ({
  from: `https://${host}`,
  to,
  prefix,
});

test('a route shadowed by an earlier one with the same host and matcher is reported, naming it', () => {
  const config = parse([
    route('a.test', 'http://10.0.0.1:8080', '/x/'), // a more specific matcher first: reachable
    route('b.test', 'http://10.0.0.1:8080', '/x/'), // the same matcher on another host
    route('a.test'),
    route('b.test'),
    route('a.test'), // the same route again
    { from: 'tcp+https://a.test:5432', to: 'tcp://10.0.0.9:5432' }, // a TCP route: CONNECTs only
    route('b.test'),
    route('a.test', 'http://10.0.0.2:8080'), // other upstreams: Envoy still takes routes[2] first
    route('a.test', 'http://10.0.0.1:8080', '/'), // an unset prefix is `/`
    { from: 'http://A.test:8443', to: 'http://10.0.0.1:8080' }, // Envoy ignores from's scheme and port
    route('a.test', 'http://10.0.0.3:8080', '/x/'),
  ]);
  const result = translate(config, OPTIONS);
  assert.equal(result.ir, undefined);
  assert.deepEqual(
    result.problems.map((problem) => [problem.path, problem.message.split(' comes first')[0]]),
    [
      ['routes[4]', 'never matches: routes[2]'],
      ['routes[6]', 'never matches: routes[3]'],
      ['routes[7]', 'never matches: routes[2]'],
      ['routes[8]', 'never matches: routes[2]'],
      ['routes[9]', 'never matches: routes[2]'],
      ['routes[10]', 'never matches: routes[0]'],
    ],
  );
  assert.equal(
    result.problems[5]?.message,
    'never matches: routes[0] comes first with the same from host (a.test) and prefix matcher ("/x/"), and Envoy takes the first route that matches; remove one or change its matcher',
  );
});

test('a route with problems and a duplicate lists its own problems first', () => {
  const config = parse([
    route('a.test', 'h2c://10.0.0.1:80'),
    { ...route('a.test', 'h2c://10.0.0.1:80'), allow_websockets: true },
  ]);
  assert.deepEqual(
    translate(config, OPTIONS).problems.map((problem) => problem.path),
    ['routes[1].allow_websockets', 'routes[1]'],
  );
});

test('virtual hosts are sorted by name, the catch-all last, each with its routes in config order', () => {
  const ir = irOf(
    parse([
      route('zeta.test', 'http://10.0.0.1:80', '/0/'),
      route('a.*.test', 'http://10.0.0.2:80'), // a wildcard shape only the catch-all matches
      route('*.beta.test', 'http://10.0.0.3:80'),
      route('alpha.test', 'http://10.0.0.4:80', '/3/'),
      route('zeta.test', 'http://10.0.0.5:80', '/5/'),
      route('Alpha.test', 'http://10.0.0.6:80', '/6/'),
    ]),
  );
  assert.deepEqual(
    ir.virtualHosts.map((host) => [host.name, host.routes.map((r) => r.sourcePath)]),
    [
      ['*.beta.test', ['routes[2]']],
      ['alpha.test', ['routes[3]', 'routes[5]']],
      ['zeta.test', ['routes[0]', 'routes[4]']],
      ['catch-all', ['routes[1]']],
    ],
  );
  const names = ir.clusters.map((cluster) => cluster.name);
  assert.deepEqual(names, [...names].sort(), 'clusters sorted by name');
  assert.equal(names.length, 6);
});

test('the same config gives the same IR, whatever was translated before; reordering keeps names', () => {
  const routes = Array.from({ length: 40 }, (_, i) =>
    route(`h${i % 7}.test`, `http://10.0.1.${i}:80`, `/${i}/`),
  );
  const config = parse(routes);
  const first = JSON.stringify(irOf(config));
  irOf(parse([route('other.test')]));
  assert.equal(JSON.stringify(irOf(config)), first, 'no memory of the translation in between');
  assert.equal(JSON.stringify(irOf(parse(structuredClone(routes)))), first, 'a fresh parse, the same IR');
  const reversed = irOf(parse([...routes].reverse()));
  const original = irOf(config);
  assert.deepEqual(
    reversed.clusters.map((cluster) => cluster.name),
    original.clusters.map((cluster) => cluster.name),
    'cluster names come from route content, not place in the list',
  );
  assert.deepEqual(
    reversed.virtualHosts.map((host) => host.name),
    original.virtualHosts.map((host) => host.name),
  );
});

test('each route names its identity-provider client: its own idp_client_id, else the global one', () => {
  const config = parse([
    route('a.test'),
    { ...route('b.test'), idp_client_id: 'b-client', idp_client_secret: 'b-secret' },
    { ...route('c.test'), allow_public_unauthenticated_access: true },
  ]);
  const byHost = new Map(irOf(config).virtualHosts.map((host) => [host.name, host.routes[0]?.idpId]));
  const global = identityProviderFor(config)?.id;
  const own = identityProviderFor(config, { idp_client_id: 'b-client' })?.id;
  assert.match(global ?? '', /^[0-9a-f]{16}$/);
  assert.equal(byHost.get('a.test'), global);
  assert.equal(byHost.get('c.test'), global);
  assert.ok(own !== undefined && own !== global);
  assert.equal(byHost.get('b.test'), own, 'the route is its own client');
  // No provider at all (only public routes need none): the routes name no client.
  const publicOnly = parseConfig({
    document: {
      insecure_server: true,
      address: ':8080',
      routes: [{ ...route('p.test'), allow_public_unauthenticated_access: true }],
    },
    env: {},
    readText: () => '',
  }).config;
  assert.ok(publicOnly);
  assert.equal(irOf(publicOnly).virtualHosts[0]?.routes[0]?.idpId, NO_IDENTITY_PROVIDER);
});

test('jwt_issuer_format reaches the IR (host_only by default)', () => {
  assert.equal(irOf(parse([route('a.test')])).authorize.issuerFormat, 'host_only');
  const uri = parseConfig({
    document: {
      ...SIGN_IN,
      insecure_server: true,
      address: ':8080',
      jwt_issuer_format: 'uri',
      routes: [route('a.test')],
    },
    env: {},
    readText: () => '',
  }).config;
  assert.ok(uri);
  assert.equal(irOf(uri).authorize.issuerFormat, 'uri');
});

test('a route on the authenticate host is a problem: Portcullis answers every path of that host', () => {
  const config = parse([route('a.test'), route('b.test')]);
  const result = translate({ ...config, authenticate_service_url: new URL('https://B.test:8443') }, OPTIONS);
  assert.equal(result.ir, undefined);
  assert.deepEqual(
    result.problems.map((problem) => problem.path),
    ['routes[1]'],
  );
  assert.match(result.problems[0]?.message ?? '', /b\.test is the authenticate_service_url host/);
});

test('a catch-all wildcard host matches with or without the port the client sent', () => {
  const ir = irOf(parse([route('a.*.test')]));
  const regex = new RegExp(ir.virtualHosts[0]?.routes[0]?.authorityRegex ?? '');
  assert.ok(regex.test('a.x.test'));
  assert.ok(regex.test('a.x.test:8443'));
  assert.ok(!regex.test('a.x.test:'));
  assert.ok(!regex.test('a.x.test:8443x'));
  assert.ok(!regex.test('a.test'));
});

// Per-host route delivery (scoped RDS) through a real Envoy, over delta and SotW ADS: exact hosts get
// one scope each, keyed by the request host after the port and trailing dot are stripped and naming
// the host's own RouteConfiguration; a one-host change pushes that RouteConfiguration alone; a
// wildcard route switches the listener back to one RouteConfiguration and nothing stops answering.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startEchoUpstream, type EchoUpstream } from '../support/upstreams.js';
import { proxyRequest, startPortcullis, type TestPortcullis } from '../support/portcullis.js';
import { waitFor } from '../support/wait.js';
import { adminRequest } from '../../src/envoy/admin.js';
import { TEST_AUTHENTICATE_URL } from '../support/sign-in-config.js';

const AUTHENTICATE_HOST = new URL(TEST_AUTHENTICATE_URL).hostname;

let upstream: EchoUpstream;
let portcullis: TestPortcullis;
const publicRoute = (from: string): Record<string, unknown> => ({
  allow_public_unauthenticated_access: true,
  from,
  to: upstream.url,
});

before(async () => {
  upstream = await startEchoUpstream({ id: 'u' });
  portcullis = await startPortcullis({
    routes: [publicRoute('https://a.test'), publicRoute('https://b.test')],
  });
});

after(async () => {
  await portcullis?.stop();
  await upstream?.stop();
});

async function status(host: string): Promise<number> {
  return (await proxyRequest(portcullis.proxyPort, host, '/')).status;
}

interface Dump {
  configs: {
    '@type': string;
    dynamic_scoped_route_configs?: { scoped_route_configs?: { name: string }[] }[];
    dynamic_route_configs?: { route_config: { name: string } }[];
    dynamic_listeners?: { active_state?: { listener: unknown } }[];
  }[];
}

async function dump(): Promise<Dump> {
  return JSON.parse((await adminRequest(portcullis.adminUrl, '/config_dump')).body) as Dump;
}

/** Names of the scopes and of the RDS route configurations Envoy holds. */
async function envoyRouting(): Promise<{ scopes: string[]; routeConfigs: string[] }> {
  const configs = (await dump()).configs;
  const scoped = configs.find((config) => config['@type'].endsWith('.ScopedRoutesConfigDump'));
  const routes = configs.find((config) => config['@type'].endsWith('.RoutesConfigDump'));
  return {
    scopes: (scoped?.dynamic_scoped_route_configs?.[0]?.scoped_route_configs ?? [])
      .map((scope) => scope.name)
      .sort(),
    routeConfigs: (routes?.dynamic_route_configs ?? []).map((entry) => entry.route_config.name).sort(),
  };
}

/** The version of each scope and per-host RouteConfiguration in Portcullis's current snapshot. */
function routingVersions(): Map<string, string | undefined> {
  const resources = portcullis.running.store.current()?.resources;
  const scopes = resources?.['envoy.config.route.v3.ScopedRouteConfiguration'].values() ?? [];
  const tables = resources?.['envoy.config.route.v3.RouteConfiguration'].values() ?? [];
  return new Map([
    ...[...scopes].map((scope) => [`scope ${scope.name}`, scope.version] as const),
    ...[...tables].map((table) => [`rds ${table.name}`, table.version] as const),
  ]);
}

/** RDS responses Envoy ACKed so far (per-host tables travel over RDS). */
function rdsAcks(): number {
  return portcullis.running.ads.stats().acks.routes;
}

async function listenerJson(): Promise<string> {
  const listeners = (await dump()).configs.find((config) => config['@type'].endsWith('.ListenersConfigDump'));
  return JSON.stringify(listeners?.dynamic_listeners?.[0]?.active_state?.listener ?? {});
}

describe('per-host route delivery', () => {
  test('exact hosts are served from one scope each, found with or without port and trailing dot', async () => {
    assert.match(await listenerJson(), /"scoped_routes"/);
    // The authenticate host (Portcullis's own, test/support/sign-in-config.ts) has a scope too.
    assert.deepEqual(await envoyRouting(), {
      scopes: ['ingress/a.test', `ingress/${AUTHENTICATE_HOST}`, 'ingress/b.test'],
      routeConfigs: ['ingress/a.test', `ingress/${AUTHENTICATE_HOST}`, 'ingress/b.test'],
    });
    for (const host of ['a.test', 'a.test:8443', 'a.test.', 'a.test.:8443', 'A.Test.:8443', 'b.test']) {
      assert.equal(await status(host), 200, host);
    }
    assert.equal(await status('c.test'), 404, 'an unknown host has no scope');
  });

  test('adding a host adds its scope and table and leaves every other host untouched', async () => {
    const before = routingVersions();
    portcullis.writeConfig({
      routes: [publicRoute('https://a.test'), publicRoute('https://b.test'), publicRoute('https://c.test')],
    });
    await waitFor(async () => (await status('c.test')) === 200, { what: 'c.test to answer' });
    await portcullis.waitForEnvoyToApply('the added host');
    const now = routingVersions();
    for (const key of [
      'scope ingress/a.test',
      'rds ingress/a.test',
      'scope ingress/b.test',
      'rds ingress/b.test',
    ])
      assert.equal(now.get(key), before.get(key), `${key} unchanged: not pushed again`);
    assert.deepEqual(await envoyRouting(), {
      scopes: ['ingress/a.test', `ingress/${AUTHENTICATE_HOST}`, 'ingress/b.test', 'ingress/c.test'],
      routeConfigs: ['ingress/a.test', `ingress/${AUTHENTICATE_HOST}`, 'ingress/b.test', 'ingress/c.test'],
    });
  });

  test("changing one host's route changes that RouteConfiguration alone, and Envoy serves it", async () => {
    const before = routingVersions();
    const acksBefore = rdsAcks();
    portcullis.writeConfig({
      routes: [
        publicRoute('https://a.test'),
        { ...publicRoute('https://b.test'), prefix: '/only' },
        publicRoute('https://c.test'),
      ],
    });
    await waitFor(async () => (await status('b.test')) === 404, { what: 'b.test to serve /only alone' });
    await portcullis.waitForEnvoyToApply('the changed host');
    assert.equal((await proxyRequest(portcullis.proxyPort, 'b.test', '/only')).status, 200);
    const now = routingVersions();
    const changed = [...now].filter(([key, version]) => before.get(key) !== version).map(([key]) => key);
    assert.deepEqual(changed, ['rds ingress/b.test'], 'scopes and other hosts untouched');
    assert.ok(rdsAcks() > acksBefore, 'the table travelled over RDS');
  });

  test('a wildcard route switches to one RouteConfiguration and every host keeps answering', async () => {
    portcullis.writeConfig({
      routes: [publicRoute('https://a.test'), publicRoute('https://*.wild.test')],
    });
    await waitFor(async () => (await status('x.wild.test')) === 200, { what: 'the wildcard route' });
    await portcullis.waitForEnvoyToApply('the wildcard config');
    assert.doesNotMatch(await listenerJson(), /"scoped_routes"/);
    assert.equal(await status('a.test'), 200);
    assert.equal(await status('b.test'), 404, 'b.test was removed');
    portcullis.writeConfig({ routes: [publicRoute('https://a.test')] });
    await waitFor(async () => (await status('x.wild.test')) === 404, { what: 'back to per-host' });
    await portcullis.waitForEnvoyToApply('per-host again');
    assert.match(await listenerJson(), /"scoped_routes"/);
    assert.equal(await status('a.test'), 200);
  });

  test('a host written with upper-case letters finds its scope, and ext_authz decides for that route', async () => {
    portcullis.writeConfig({
      routes: [
        publicRoute('https://a.test'),
        { from: 'https://p.test', to: upstream.url, allow_any_authenticated_user: true },
      ],
    });
    const api = { headers: { accept: 'application/json' } };
    const apiStatus = async (host: string): Promise<number> =>
      (await proxyRequest(portcullis.proxyPort, host, '/', api)).status;
    await waitFor(async () => (await apiStatus('p.test')) === 401, { what: 'p.test to be protected' });
    await portcullis.waitForEnvoyToApply('the protected host');
    for (const host of ['A.TEST', 'A.Test:8443', 'a.TEST.']) assert.equal(await status(host), 200, host);
    for (const host of ['P.TEST', 'P.test:8443']) {
      assert.equal(await apiStatus(host), 401, `${host}: the protected route's decision, not 404`);
    }
    assert.equal(await status('C.TEST'), 404, 'an unknown host still has no scope');
  });
});

describe('per-host route delivery over SotW ADS', () => {
  let sotw: TestPortcullis;
  before(async () => {
    sotw = await startPortcullis(
      { routes: [publicRoute('https://a.test'), publicRoute('https://b.test')] },
      { adsApiType: 'GRPC' },
    );
  });
  after(async () => {
    await sotw?.stop();
  });
  const sotwStatus = async (host: string, path = '/'): Promise<number> =>
    (await proxyRequest(sotw.proxyPort, host, path)).status;

  test('Envoy takes partial RDS responses: a changed host alone, every other host keeps serving', async () => {
    assert.equal(await sotwStatus('a.test'), 200);
    assert.equal(await sotwStatus('b.test'), 200);
    const responsesBefore = sotw.running.ads.stats().responsesSent.routes;
    sotw.writeConfig({
      routes: [publicRoute('https://a.test'), { ...publicRoute('https://b.test'), prefix: '/only' }],
    });
    await waitFor(async () => (await sotwStatus('b.test')) === 404, { what: 'b.test to serve /only alone' });
    await sotw.waitForEnvoyToApply('the changed host over SotW');
    assert.equal(await sotwStatus('b.test', '/only'), 200);
    assert.equal(await sotwStatus('a.test'), 200, 'a.test, absent from the RDS response, is kept');
    assert.equal(sotw.running.ads.stats().responsesSent.routes, responsesBefore + 1, 'one RDS response');
    sotw.writeConfig({ routes: [publicRoute('https://b.test')] });
    await waitFor(async () => (await sotwStatus('a.test')) === 404, { what: 'a.test to be removed' });
    assert.equal(await sotwStatus('b.test'), 200);
  });
});

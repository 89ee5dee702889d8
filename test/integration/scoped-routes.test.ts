// Per-host route delivery (scoped RDS) through a real Envoy: exact hosts get one scope each, with
// the host's RouteConfiguration inline, keyed by the request host after the port and trailing dot
// are stripped; a one-host change pushes that scope alone; a wildcard route switches the listener
// back to one RouteConfiguration and nothing stops answering.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startEchoUpstream, type EchoUpstream } from '../support/upstreams.js';
import { proxyRequest, startPortcullis, type TestPortcullis } from '../support/portcullis.js';
import { waitFor } from '../support/wait.js';
import { adminRequest } from '../../src/envoy/admin.js';

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
    dynamic_route_configs?: unknown[];
    dynamic_listeners?: { active_state?: { listener: unknown } }[];
  }[];
}

async function dump(): Promise<Dump> {
  return JSON.parse((await adminRequest(portcullis.adminUrl, '/config_dump')).body) as Dump;
}

/** Names of the scopes Envoy holds, and how many RDS route configurations it has. */
async function envoyRouting(): Promise<{ scopes: string[]; routeConfigs: number }> {
  const configs = (await dump()).configs;
  const scoped = configs.find((config) => config['@type'].endsWith('.ScopedRoutesConfigDump'));
  const routes = configs.find((config) => config['@type'].endsWith('.RoutesConfigDump'));
  return {
    scopes: (scoped?.dynamic_scoped_route_configs?.[0]?.scoped_route_configs ?? [])
      .map((scope) => scope.name)
      .sort(),
    routeConfigs: routes?.dynamic_route_configs?.length ?? 0,
  };
}

/** The version of each scope in Portcullis's current snapshot (what delta xDS pushes by). */
function scopeVersions(): Map<string, string | undefined> {
  const scopes =
    portcullis.running.store.current()?.resources['envoy.config.route.v3.ScopedRouteConfiguration'];
  return new Map([...(scopes?.values() ?? [])].map((scope) => [scope.name, scope.version]));
}

async function listenerJson(): Promise<string> {
  const listeners = (await dump()).configs.find((config) => config['@type'].endsWith('.ListenersConfigDump'));
  return JSON.stringify(listeners?.dynamic_listeners?.[0]?.active_state?.listener ?? {});
}

describe('per-host route delivery', () => {
  test('exact hosts are served from one scope each, found with or without port and trailing dot', async () => {
    assert.match(await listenerJson(), /"scoped_routes"/);
    assert.deepEqual(await envoyRouting(), { scopes: ['ingress/a.test', 'ingress/b.test'], routeConfigs: 0 });
    for (const host of ['a.test', 'a.test:8443', 'a.test.', 'b.test']) {
      assert.equal(await status(host), 200, host);
    }
    assert.equal(await status('c.test'), 404, 'an unknown host has no scope');
  });

  test('adding a host adds its scope and leaves every other host untouched', async () => {
    const before = scopeVersions();
    portcullis.writeConfig({
      routes: [publicRoute('https://a.test'), publicRoute('https://b.test'), publicRoute('https://c.test')],
    });
    await waitFor(async () => (await status('c.test')) === 200, { what: 'c.test to answer' });
    await portcullis.waitForEnvoyToApply('the added host');
    const now = scopeVersions();
    assert.equal(now.get('ingress/a.test'), before.get('ingress/a.test'), 'unchanged: not pushed again');
    assert.equal(now.get('ingress/b.test'), before.get('ingress/b.test'), 'unchanged: not pushed again');
    assert.deepEqual((await envoyRouting()).scopes, ['ingress/a.test', 'ingress/b.test', 'ingress/c.test']);
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
});

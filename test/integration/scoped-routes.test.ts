// Per-host route delivery (scoped RDS) through a real Envoy: exact hosts get one scope and one
// RouteConfiguration each, keyed by the request host after the port and trailing dot are
// stripped; a one-host change leaves every other host's RouteConfiguration untouched in Envoy; a
// wildcard route switches the listener back to one RouteConfiguration and nothing stops answering.
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
    dynamic_route_configs?: { version_info: string; route_config: { name: string } }[];
    dynamic_listeners?: { active_state?: { listener: unknown } }[];
  }[];
}

async function dump(): Promise<Dump> {
  return JSON.parse((await adminRequest(portcullis.adminUrl, '/config_dump')).body) as Dump;
}

/** Envoy's RouteConfigurations by name -> version. */
async function routeConfigVersions(): Promise<Map<string, string>> {
  const routes = (await dump()).configs.find((config) => config['@type'].endsWith('.RoutesConfigDump'));
  return new Map(
    (routes?.dynamic_route_configs ?? []).map((entry) => [entry.route_config.name, entry.version_info]),
  );
}

async function listenerJson(): Promise<string> {
  const listeners = (await dump()).configs.find((config) => config['@type'].endsWith('.ListenersConfigDump'));
  return JSON.stringify(listeners?.dynamic_listeners?.[0]?.active_state?.listener ?? {});
}

describe('per-host route delivery', () => {
  test('exact hosts are served from one scope each, found with or without port and trailing dot', async () => {
    assert.match(await listenerJson(), /"scoped_routes"/);
    assert.deepEqual([...(await routeConfigVersions()).keys()].sort(), ['ingress/a.test', 'ingress/b.test']);
    for (const host of ['a.test', 'a.test:8443', 'a.test.', 'b.test']) {
      assert.equal(await status(host), 200, host);
    }
    assert.equal(await status('c.test'), 404, 'an unknown host has no scope');
  });

  test('adding a host adds its scope and leaves every other host untouched', async () => {
    const before = await routeConfigVersions();
    portcullis.writeConfig({
      routes: [publicRoute('https://a.test'), publicRoute('https://b.test'), publicRoute('https://c.test')],
    });
    await waitFor(async () => (await status('c.test')) === 200, { what: 'c.test to answer' });
    await portcullis.waitForEnvoyToApply('the added host');
    const now = await routeConfigVersions();
    assert.equal(now.get('ingress/a.test'), before.get('ingress/a.test'));
    assert.equal(now.get('ingress/b.test'), before.get('ingress/b.test'));
    assert.ok(now.has('ingress/c.test'));
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

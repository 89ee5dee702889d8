// `portcullis kubernetes` serving routes from Ingress on a real etcd + kube-apiserver and the real
// Envoy: an IngressClass of ours, a Service with an EndpointSlice pointing at an HTTP upstream on a
// test host in a network namespace of the test's own (netns-host.ts: the API server refuses loopback
// EndpointSlice addresses), and Ingresses with policy annotations. A public route reaches the backend, a route
// needing a user does not; an annotation change, a second endpoint (routes and clusters keep their
// names) and a deleted Ingress take effect live; a bad policy annotation is an Event on that
// Ingress while the last good routes keep serving; an Ingress of another class is ignored.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../support/kube-client.js';
import { startKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import {
  applySettings,
  endpointSlice,
  IDP_CLIENT_SECRET,
  ingress,
  ingressClass,
  ingressRef,
  waitForEvent,
  webService,
} from '../support/kube-route-objects.js';
import { spawnKubePortcullis, type KubePortcullis } from '../support/kube-portcullis.js';
import { sendToListener } from '../support/listener-request.js';
import { startNetnsHost, type NetnsEcho, type NetnsHost } from '../support/netns-host.js';
import { waitFor } from '../support/wait.js';

const PUBLIC = 'portcullis.dev/allow_public_unauthenticated_access';
const ANY_USER = 'portcullis.dev/allow_any_authenticated_user';

/** The route names and cluster names of Envoy's dynamic route configurations. */
async function routeShape(
  adminUrl: string,
): Promise<{ routes: string[]; clusters: string[]; version: string }> {
  const answer = await fetch(`${adminUrl}/config_dump?resource=dynamic_route_configs`);
  const dump = (await answer.json()) as {
    configs: {
      version_info?: string;
      route_config: { virtual_hosts?: { routes?: { name?: string; route?: { cluster?: string } }[] }[] };
    }[];
  };
  const routes = dump.configs
    .flatMap((c) => c.route_config.virtual_hosts ?? [])
    .flatMap((v) => v.routes ?? []);
  return {
    routes: routes.map((r) => r.name ?? '').sort(),
    clusters: [
      ...new Set(routes.flatMap((r) => (r.route?.cluster === undefined ? [] : [r.route.cluster]))),
    ].sort(),
    version: dump.configs.map((c) => c.version_info ?? '').join(','),
  };
}

describe('portcullis kubernetes: routes from Ingress, live, on a real API server and Envoy', () => {
  let testHost: NetnsHost;
  let address: string;
  let cluster: KubeCluster;
  let replica: KubePortcullis;
  let backend: NetnsEcho;
  let second: NetnsEcho;
  const get = (host: string, path = '/') => sendToListener(replica.proxyPort, host, path);
  /** Whether a request to `host` reaches a backend (its echo answer) rather than Portcullis. */
  const reaches = async (host: string): Promise<boolean> => {
    const answer = await get(host);
    return answer.status === 200 && answer.body.includes('"path":"/"');
  };

  before(async () => {
    testHost = await startNetnsHost();
    address = testHost.address;
    backend = await testHost.startEcho('web-a');
    cluster = await startKubeCluster();
    await applySettings(cluster.admin);
    await cluster.admin.apply(ingressClass('portcullis', 'portcullis.dev/ingress-controller'));
    await cluster.admin.apply(ingressClass('other', 'example.com/other-controller'));
    await cluster.admin.apply(webService(backend.port));
    await cluster.admin.apply(endpointSlice('web-1', backend.port, [address]));
    await cluster.admin.apply(ingress('h1', 'h1.example.com', { [PUBLIC]: 'true' }));
    await cluster.admin.apply(ingress('h2', 'h2.example.com', { [ANY_USER]: 'true' }));
    // Another class's Ingress with an annotation Portcullis would refuse: ignored, it blocks nothing.
    await cluster.admin.apply(
      ingress('h3', 'h3.example.com', { 'portcullis.dev/policy': 'allow: [oops' }, 'other'),
    );
    // Ours, refused from the start: the first build serves every other Ingress without it.
    await cluster.admin.apply(ingress('bad', 'bad.example.com', { 'portcullis.dev/timeout': 'soon' }));
    replica = await spawnKubePortcullis({
      kubeconfigPath: cluster.kubeconfigPath,
      identity: 'replica-a',
      args: ['--lease-seconds', '3', '--publish-address', '203.0.113.7'],
      ready: 'ready: Envoy is serving routes',
    });
  });
  after(async () => {
    await replica?.stop('SIGKILL');
    await cluster?.stop();
    await backend?.stop();
    await second?.stop();
    await testHost?.stop();
  });

  it('a public Ingress reaches its backend; one needing a user does not; another class is ignored', async () => {
    await waitFor(() => reaches('h1.example.com'), { what: 'h1 to reach the backend', timeoutMs: 20_000 });
    const denied = await get('h2.example.com');
    assert.notEqual(denied.status, 200, 'no session: not the backend');
    assert.ok(!denied.body.includes('"id":"web-a"'), denied.body);
    assert.equal((await get('h3.example.com')).status, 404, 'an Ingress of another class gives no route');
    assert.doesNotMatch(replica.output(), /Ingress default\/h3/);
    assert.match(replica.output(), /the Gateway API CRDs are not installed/);
  });

  it('an Ingress refused at start is left out of the first build, with an Event; deleting it unblocks changes', async () => {
    assert.equal((await get('bad.example.com')).status, 404);
    const event = await waitForEvent(cluster.admin, 'Ingress', 'bad', 'RouteRefused');
    assert.match(String(event['message']), /annotation portcullis\.dev\/timeout/);
    await cluster.admin.delete(ingressRef('bad'));
    await cluster.admin.apply(ingress('h4', 'h4.example.com', { [PUBLIC]: 'true' }));
    await waitFor(() => reaches('h4.example.com'), { what: 'h4 to be served', timeoutMs: 20_000 });
    await cluster.admin.delete(ingressRef('h4'));
  });

  it("the Lease holder writes the address it serves on into our Ingresses' status only", async () => {
    const loadBalancer = (o: KubeObject): unknown =>
      (o['status'] as { loadBalancer?: { ingress?: unknown } } | undefined)?.loadBalancer?.ingress;
    for (const name of ['h1', 'h2'])
      await cluster.admin.waitFor(
        ingressRef(name),
        (o) => JSON.stringify(loadBalancer(o)) === JSON.stringify([{ ip: '203.0.113.7' }]),
        `Ingress ${name} status to carry the publish address`,
        20_000,
      );
    assert.equal(
      loadBalancer(await cluster.admin.get(ingressRef('h3'))),
      undefined,
      'another class: untouched',
    );
  });

  it('an annotation change takes effect live', async () => {
    await cluster.admin.apply(ingress('h1', 'h1.example.com', { [ANY_USER]: 'true' }));
    await waitFor(async () => !(await reaches('h1.example.com')), {
      what: 'h1 to need a user',
      timeoutMs: 20_000,
    });
    await cluster.admin.apply(ingress('h1', 'h1.example.com', { [PUBLIC]: 'true' }));
    await waitFor(() => reaches('h1.example.com'), { what: 'h1 to be public again', timeoutMs: 20_000 });
  });

  it('a second endpoint (another EndpointSlice of the Service) is served; no route or cluster is renamed', async () => {
    const before = await routeShape(replica.adminUrl);
    assert.ok(before.clusters.length > 0 && before.version !== '', JSON.stringify(before));
    // Same address, another port: a port is per slice, so the new endpoint comes in its own slice.
    second = await testHost.startEcho('web-b');
    await cluster.admin.apply(endpointSlice('web-2', second.port, [address]));
    await waitFor(
      async () => {
        const answer = await get('h1.example.com');
        return answer.status === 200 && answer.body.includes('"id":"web-b"');
      },
      { what: 'a request to reach the second endpoint', timeoutMs: 20_000 },
    );
    const after = await routeShape(replica.adminUrl);
    assert.deepEqual(after.routes, before.routes, 'no route renamed');
    assert.deepEqual(after.clusters, before.clusters, 'no cluster renamed');
    assert.equal(after.version, before.version, 'the route configuration was not pushed again');
  });

  it('a bad policy annotation: an Event on that Ingress; the last good routes keep serving', async () => {
    await cluster.admin.apply(
      ingress('h1', 'h1.example.com', {
        [PUBLIC]: 'true',
        'portcullis.dev/policy': 'allow: {no_such_criterion: 1}',
      }),
    );
    const event = await waitForEvent(cluster.admin, 'Ingress', 'h1', 'RouteRefused');
    assert.equal(event['type'], 'Warning');
    assert.match(String(event['message']), /Ingress default\/h1/);
    assert.match(String(event['message']), /policy/);
    assert.ok(!JSON.stringify(event).includes(IDP_CLIENT_SECRET));
    assert.ok(await reaches('h1.example.com'), 'the last good h1 route keeps serving');
    assert.match(replica.output(), /routes refused; the last good config keeps serving/);
    assert.notEqual((await get('h2.example.com')).status, 200);
    await cluster.admin.apply(ingress('h1', 'h1.example.com', { [PUBLIC]: 'true' }));
  });

  it('deleting an Ingress removes its route', async () => {
    await cluster.admin.delete(ingressRef('h1'));
    await waitFor(async () => (await get('h1.example.com')).status === 404, {
      what: 'h1 to answer 404',
      timeoutMs: 20_000,
    });
  });
});

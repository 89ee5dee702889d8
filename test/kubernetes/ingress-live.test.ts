// `portcullis kubernetes` serving routes from Ingress on a real etcd + kube-apiserver and the real
// Envoy: an IngressClass of ours, a Service with an EndpointSlice pointing at an HTTP upstream on a
// test host in a network namespace of the test's own (netns-host.ts: the API server refuses loopback
// EndpointSlice addresses), and Ingresses with policy annotations. A public route reaches the backend, a route
// needing a user does not; an annotation change, a second endpoint (routes and clusters keep their
// names) and a deleted Ingress take effect live; an Ingress of another class is ignored. A bad
// Ingress holds no other back (per-object isolation, last-accepted.ts): a bad change is an Event on
// that Ingress while its last good version keeps serving and other Ingresses' changes serve; an
// Ingress bad from its creation is left out; a deleted TLS Secret is stood in for by its last data.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeClient, KubeObject } from '../support/kube-client.js';
import { startKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import {
  applySettings,
  endpointSlice,
  IDP_CLIENT_SECRET,
  ingress,
  ingressClass,
  ingressRef,
  NS,
  waitForEvent,
  webService,
} from '../support/kube-route-objects.js';
import { spawnKubePortcullis, type KubePortcullis } from '../support/kube-portcullis.js';
import { sendToListener } from '../support/listener-request.js';
import { startNetnsHost, type NetnsEcho, type NetnsHost } from '../support/netns-host.js';
import { generateTestCertificate } from '../support/test-certs.js';
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

/** Waits (20 s) for a RouteRefused Event on Ingress `name` whose message matches `pattern`. */
function waitForRefusal(client: KubeClient, name: string, pattern: RegExp): Promise<string> {
  return waitFor(
    async () => {
      const events = await client.list({ apiVersion: 'v1', kind: 'Event', namespace: NS });
      return events
        .filter((event) => {
          const about = event['involvedObject'] as { kind?: string; name?: string };
          return about.kind === 'Ingress' && about.name === name && event['reason'] === 'RouteRefused';
        })
        .map((event) => String(event['message']))
        .find((message) => pattern.test(message));
    },
    { what: `a RouteRefused Event on Ingress ${name} matching ${pattern}`, timeoutMs: 20_000 },
  );
}

/** Ingress `name` for `host` (see `ingress`) terminating TLS with Secret `secretName`. */
function tlsIngress(
  name: string,
  host: string,
  annotations: Record<string, string>,
  secretName: string,
): KubeObject {
  const plain = ingress(name, host, annotations);
  return { ...plain, spec: { ...(plain['spec'] as object), tls: [{ hosts: [host], secretName }] } };
}

/** A kubernetes.io/tls Secret `name` in NS with a certificate for `host` made for this run. */
function tlsSecret(name: string, host: string): KubeObject {
  const made = generateTestCertificate(host);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: NS },
    type: 'kubernetes.io/tls',
    data: {
      'tls.crt': Buffer.from(made.certPem).toString('base64'),
      'tls.key': Buffer.from(made.keyPem).toString('base64'),
    },
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

  it('an Ingress refused at start is left out of the first build, with an Event; it blocks no change; fixing it serves it', async () => {
    assert.equal((await get('bad.example.com')).status, 404);
    const message = await waitForRefusal(cluster.admin, 'bad', /annotation portcullis\.dev\/timeout/);
    assert.match(message, /left out: it never built/);
    // Still bad: another Ingress's creation serves all the same.
    await cluster.admin.apply(ingress('h4', 'h4.example.com', { [PUBLIC]: 'true' }));
    await waitFor(() => reaches('h4.example.com'), { what: 'h4 to be served', timeoutMs: 20_000 });
    assert.equal((await get('bad.example.com')).status, 404, 'bad: still left out');
    await cluster.admin.apply(
      ingress('bad', 'bad.example.com', { [PUBLIC]: 'true', 'portcullis.dev/timeout': '5s' }),
    );
    await waitFor(() => reaches('bad.example.com'), {
      what: 'the fixed Ingress to be served',
      timeoutMs: 20_000,
    });
    await cluster.admin.delete(ingressRef('bad'));
    await cluster.admin.delete(ingressRef('h4'));
    await waitFor(async () => (await get('h4.example.com')).status === 404, {
      what: 'h4 to answer 404',
      timeoutMs: 20_000,
    });
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

  it("a bad policy annotation: an Event on that Ingress; its last good version keeps serving; another Ingress's change serves; the fix serves", async () => {
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
    assert.match(String(event['message']), /its last good version keeps serving/);
    assert.ok(!JSON.stringify(event).includes(IDP_CLIENT_SECRET));
    assert.ok(await reaches('h1.example.com'), 'the last good h1 route keeps serving');
    assert.match(replica.output(), /Ingress default\/h1: .*policy.*; its last good version keeps serving/);
    // While h1 is refused, h2's change (public now) takes effect.
    assert.notEqual((await get('h2.example.com')).status, 200);
    await cluster.admin.apply(ingress('h2', 'h2.example.com', { [PUBLIC]: 'true' }));
    await waitFor(() => reaches('h2.example.com'), { what: "h2's change to serve", timeoutMs: 20_000 });
    assert.ok(await reaches('h1.example.com'), 'h1: its last good version still serves');
    // Fixing h1 (to need a user) serves the fix.
    await cluster.admin.apply(ingress('h1', 'h1.example.com', { [ANY_USER]: 'true' }));
    await waitFor(async () => !(await reaches('h1.example.com')), {
      what: "h1's fix to serve",
      timeoutMs: 20_000,
    });
    await cluster.admin.apply(ingress('h1', 'h1.example.com', { [PUBLIC]: 'true' }));
    await cluster.admin.apply(ingress('h2', 'h2.example.com', { [ANY_USER]: 'true' }));
    await waitFor(async () => (await reaches('h1.example.com')) && !(await reaches('h2.example.com')), {
      what: 'h1 public and h2 needing a user again',
      timeoutMs: 20_000,
    });
  });

  it('an Ingress bad from its creation is left out while other Ingresses keep changing', async () => {
    await cluster.admin.apply(
      ingress('late', 'late.example.com', { [PUBLIC]: 'true', 'portcullis.dev/timeout': 'never' }),
    );
    const message = await waitForRefusal(cluster.admin, 'late', /annotation portcullis\.dev\/timeout/);
    assert.match(message, /left out: it never built/);
    await cluster.admin.apply(ingress('h5', 'h5.example.com', { [PUBLIC]: 'true' }));
    await waitFor(() => reaches('h5.example.com'), { what: 'h5 to be served', timeoutMs: 20_000 });
    assert.equal((await get('late.example.com')).status, 404, 'late: left out');
    await cluster.admin.delete(ingressRef('late'));
    await cluster.admin.delete(ingressRef('h5'));
  });

  it("a deleted TLS Secret: an Event; the Ingress keeps serving with the Secret's last data while others change", async () => {
    await cluster.admin.apply(tlsSecret('t1-tls', 't1.example.com'));
    await cluster.admin.apply(tlsIngress('t1', 't1.example.com', { [PUBLIC]: 'true' }, 't1-tls'));
    await waitFor(() => reaches('t1.example.com'), { what: 't1 to be served', timeoutMs: 20_000 });
    await cluster.admin.delete({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 't1-tls', namespace: NS },
    });
    const message = await waitForRefusal(cluster.admin, 't1', /Secret default\/t1-tls does not exist/);
    assert.match(message, /its last good version keeps serving/);
    assert.ok(await reaches('t1.example.com'), 't1 keeps serving');
    // A later build (another Ingress's change) keeps the stand-in.
    await cluster.admin.apply(ingress('h6', 'h6.example.com', { [PUBLIC]: 'true' }));
    await waitFor(() => reaches('h6.example.com'), { what: 'h6 to be served', timeoutMs: 20_000 });
    // Envoy has that build now: without the stand-in t1 would be left out (404) by it.
    assert.ok(await reaches('t1.example.com'), 't1 still serves');
    await cluster.admin.delete(ingressRef('t1'));
    await cluster.admin.delete(ingressRef('h6'));
  });

  it('deleting an Ingress removes its route', async () => {
    await cluster.admin.delete(ingressRef('h1'));
    await waitFor(async () => (await get('h1.example.com')).status === 404, {
      what: 'h1 to answer 404',
      timeoutMs: 20_000,
    });
  });
});

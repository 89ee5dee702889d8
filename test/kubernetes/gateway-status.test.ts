// `portcullis kubernetes` and the Gateway API status, on a real etcd + kube-apiserver and the real
// Envoy: a Gateway with an HTTPS listener whose certificate is a kubernetes.io/tls Secret made here,
// and an HTTPRoute on it. Through Envoy, a TLS request with the route's host as SNI gets that
// certificate and reaches the backend. The Lease holder writes the status: the GatewayClass
// Accepted, the Gateway Accepted and Programmed with the publish address and the listener's
// attached route, the HTTPRoute's parents entry; a bad annotation is Accepted False naming it while
// the old route keeps serving; a missing backend Service is ResolvedRefs False BackendNotFound; a
// listener's missing certificate Secret is ResolvedRefs False InvalidCertificateRef; a second
// replica (not the holder) writes no status.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject, KubeRef } from '../support/kube-client.js';
import { startKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { applyGatewayApiCrds } from '../support/kube-crds.js';
import { spawnKubePortcullis, type KubePortcullis } from '../support/kube-portcullis.js';
import { applySettings, endpointSlice, NS, webService } from '../support/kube-route-objects.js';
import { sendTlsToListener } from '../support/listener-request.js';
import { startNetnsHost, type NetnsEcho, type NetnsHost } from '../support/netns-host.js';
import { generateTestCertificate } from '../support/test-certs.js';
import { waitFor } from '../support/wait.js';

const GATEWAY_API = 'gateway.networking.k8s.io/v1';
const CONTROLLER = 'portcullis.dev/gateway-controller';
const HOST = 'g1.example.com';
const PUBLISH_ADDRESS = '203.0.113.9';
const PUBLIC = { 'portcullis.dev/allow_public_unauthenticated_access': 'true' };
const LEADER = 'replica-t';

const CLASS: KubeRef = { apiVersion: GATEWAY_API, kind: 'GatewayClass', metadata: { name: 'portcullis' } };
const GATEWAY: KubeRef = {
  apiVersion: GATEWAY_API,
  kind: 'Gateway',
  metadata: { name: 'edge', namespace: NS },
};
const ROUTE: KubeRef = {
  apiVersion: GATEWAY_API,
  kind: 'HTTPRoute',
  metadata: { name: 'r1', namespace: NS },
};

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}
interface GatewayStatus {
  addresses?: { type: string; value: string }[];
  conditions?: Condition[];
  listeners?: { name: string; attachedRoutes: number; supportedKinds: unknown[]; conditions: Condition[] }[];
}
interface RouteStatus {
  parents?: { parentRef: Record<string, unknown>; controllerName: string; conditions: Condition[] }[];
}

const statusOf = <T>(object: KubeObject): T => (object['status'] as T | undefined) ?? ({} as T);
const generationOf = (object: KubeObject): number | undefined =>
  (object.metadata as { generation?: number }).generation;
const find = (conditions: readonly Condition[] | undefined, type: string): Condition | undefined =>
  conditions?.find((c) => c.type === type);
/** Whether `type` is `status` for the object's current generation. */
const holds = (
  object: KubeObject,
  conditions: readonly Condition[] | undefined,
  type: string,
  status: string,
) => {
  const found = find(conditions, type);
  return found?.status === status && found.observedGeneration === generationOf(object);
};
/** Our parents entry of the HTTPRoute. */
const ourParent = (object: KubeObject) =>
  statusOf<RouteStatus>(object).parents?.find((p) => p.controllerName === CONTROLLER);
/** The field managers that wrote the status subresource. */
function statusWriters(object: KubeObject): string[] {
  const fields = (object.metadata as { managedFields?: { manager?: string; subresource?: string }[] })
    .managedFields;
  return (fields ?? []).filter((entry) => entry.subresource === 'status').map((entry) => entry.manager ?? '');
}

function httpRoute(annotations: Record<string, string>, service = 'web'): KubeObject {
  return {
    ...ROUTE,
    metadata: { ...ROUTE.metadata, annotations } as KubeObject['metadata'],
    spec: {
      parentRefs: [{ name: 'edge', sectionName: 'https' }],
      hostnames: [HOST],
      rules: [{ backendRefs: [{ name: service, port: 80 }] }],
    },
  };
}

describe('portcullis kubernetes: Gateway API status and an HTTPS Gateway listener, live', () => {
  const certificate = generateTestCertificate(HOST);
  let cluster: KubeCluster;
  let replica: KubePortcullis;
  let follower: KubePortcullis;
  let testHost: NetnsHost;
  let backend: NetnsEcho;
  const reaches = async (): Promise<boolean> => {
    const answer = await sendTlsToListener(replica.proxyPort, HOST, '/', certificate.certPem);
    return answer.status === 200 && answer.body.includes('"id":"web-t"');
  };

  before(async () => {
    testHost = await startNetnsHost();
    backend = await testHost.startEcho('web-t');
    cluster = await startKubeCluster();
    // TLS on Portcullis's listener, with the certificates the Gateway's listeners name.
    await applySettings(cluster.admin, undefined, { insecureServer: false });
    await applyGatewayApiCrds(cluster.admin);
    await cluster.admin.apply({ ...CLASS, spec: { controllerName: CONTROLLER } });
    await cluster.admin.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'g1-tls', namespace: NS },
      type: 'kubernetes.io/tls',
      data: {
        'tls.crt': Buffer.from(certificate.certPem).toString('base64'),
        'tls.key': Buffer.from(certificate.keyPem).toString('base64'),
      },
    });
    await cluster.admin.apply({
      ...GATEWAY,
      spec: {
        gatewayClassName: 'portcullis',
        listeners: [
          {
            name: 'https',
            port: 443,
            protocol: 'HTTPS',
            hostname: '*.example.com',
            tls: { mode: 'Terminate', certificateRefs: [{ kind: 'Secret', name: 'g1-tls' }] },
          },
        ],
      },
    });
    await cluster.admin.apply(webService(backend.port));
    await cluster.admin.apply(endpointSlice('web-1', backend.port, [testHost.address]));
    await cluster.admin.apply(httpRoute(PUBLIC));
    replica = await spawnKubePortcullis({
      kubeconfigPath: cluster.kubeconfigPath,
      identity: LEADER,
      args: ['--lease-seconds', '3', '--publish-address', PUBLISH_ADDRESS],
      ready: 'ready: Envoy is serving routes',
    });
    // Joins once the first holds the Lease (taken before its first build): it never writes status.
    follower = await spawnKubePortcullis({
      kubeconfigPath: cluster.kubeconfigPath,
      identity: 'replica-u',
      args: ['--lease-seconds', '3', '--without-envoy', '--publish-address', PUBLISH_ADDRESS],
      ready: 'ready: serving ADS for a sidecar Envoy',
    });
  });
  after(async () => {
    await follower?.stop('SIGKILL');
    await replica?.stop('SIGKILL');
    await cluster?.stop();
    await backend?.stop();
    await testHost?.stop();
  });

  it("a TLS request with the route's host as SNI gets the listener's certificate and reaches the backend", async () => {
    await waitFor(reaches, { what: `${HOST} to reach the backend over TLS`, timeoutMs: 20_000 });
    const answer = await sendTlsToListener(replica.proxyPort, HOST, '/', certificate.certPem);
    assert.equal(answer.certificate.commonName, HOST);
    assert.equal(answer.certificate.subjectAltName, `DNS:${HOST}`);
  });

  let acceptedSince = '';

  it('the GatewayClass is Accepted; the Gateway Accepted and Programmed with the address; the route attached and accepted', async () => {
    const gatewayClass = await cluster.admin.waitFor(
      CLASS,
      (o) => holds(o, statusOf<GatewayStatus>(o).conditions, 'Accepted', 'True'),
      'the GatewayClass to be Accepted',
      20_000,
    );
    assert.equal(find(statusOf<GatewayStatus>(gatewayClass).conditions, 'Accepted')?.reason, 'Accepted');
    const gateway = await cluster.admin.waitFor(
      GATEWAY,
      (o) => {
        const status = statusOf<GatewayStatus>(o);
        return (
          holds(o, status.conditions, 'Programmed', 'True') && status.listeners?.[0]?.attachedRoutes === 1
        );
      },
      'the Gateway to be Programmed with its route attached',
      20_000,
    );
    const status = statusOf<GatewayStatus>(gateway);
    assert.deepEqual(status.addresses, [{ type: 'IPAddress', value: PUBLISH_ADDRESS }]);
    const accepted = find(status.conditions, 'Accepted');
    assert.equal(accepted?.status, 'True');
    acceptedSince = accepted?.lastTransitionTime ?? '';
    const [listener] = status.listeners ?? [];
    assert.equal(listener?.name, 'https');
    assert.deepEqual(listener?.supportedKinds, [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }]);
    for (const type of ['Accepted', 'ResolvedRefs', 'Programmed'])
      assert.equal(find(listener?.conditions, type)?.status, 'True', `listener ${type}`);
    const route = await cluster.admin.waitFor(
      ROUTE,
      (o) => holds(o, ourParent(o)?.conditions, 'Accepted', 'True'),
      'the HTTPRoute to be Accepted',
      20_000,
    );
    const parent = ourParent(route);
    assert.deepEqual(parent?.parentRef, {
      group: 'gateway.networking.k8s.io',
      kind: 'Gateway',
      name: 'edge',
      sectionName: 'https',
    });
    assert.equal(find(parent?.conditions, 'ResolvedRefs')?.status, 'True');
  });

  it('a bad annotation: the route is Accepted False naming it; the last good route keeps serving', async () => {
    await cluster.admin.apply(httpRoute({ ...PUBLIC, 'portcullis.dev/timeout': 'soon' }));
    const route = await cluster.admin.waitFor(
      ROUTE,
      (o) => holds(o, ourParent(o)?.conditions, 'Accepted', 'False'),
      'the HTTPRoute to be Accepted False',
      20_000,
    );
    const accepted = find(ourParent(route)?.conditions, 'Accepted');
    assert.equal(accepted?.reason, 'UnsupportedValue');
    assert.match(accepted?.message ?? '', /^HTTPRoute default\/r1: annotation portcullis\.dev\/timeout: /);
    assert.match(accepted?.message ?? '', /the last good routes keep serving$/);
    assert.ok(await reaches(), 'the last good route keeps serving');
    const gateway = await cluster.admin.get(GATEWAY);
    assert.equal(
      find(statusOf<GatewayStatus>(gateway).conditions, 'Accepted')?.lastTransitionTime,
      acceptedSince,
      "the Gateway's unchanged condition keeps its time",
    );
  });

  it('a backendRef to a missing Service: ResolvedRefs False BackendNotFound', async () => {
    await cluster.admin.apply(httpRoute(PUBLIC, 'nope'));
    const route = await cluster.admin.waitFor(
      ROUTE,
      (o) => holds(o, ourParent(o)?.conditions, 'ResolvedRefs', 'False'),
      'the HTTPRoute to be ResolvedRefs False',
      20_000,
    );
    const resolved = find(ourParent(route)?.conditions, 'ResolvedRefs');
    assert.equal(resolved?.reason, 'BackendNotFound');
    assert.match(
      resolved?.message ?? '',
      /spec\.rules\[0\]\.backendRefs\[0\]: Service default\/nope does not exist/,
    );
    assert.ok(await reaches(), 'the last good route keeps serving');
  });

  it('a listener whose certificate Secret is missing: ResolvedRefs False InvalidCertificateRef, not Programmed', async () => {
    const broken: KubeRef = { ...GATEWAY, metadata: { name: 'broken', namespace: NS } };
    await cluster.admin.apply({
      ...broken,
      spec: {
        gatewayClassName: 'portcullis',
        listeners: [
          {
            name: 'https',
            port: 443,
            protocol: 'HTTPS',
            hostname: 'b.example.com',
            tls: { certificateRefs: [{ name: 'absent' }] },
          },
        ],
      },
    });
    const gateway = await cluster.admin.waitFor(
      broken,
      (o) => holds(o, statusOf<GatewayStatus>(o).listeners?.[0]?.conditions, 'ResolvedRefs', 'False'),
      'the broken Gateway listener to be ResolvedRefs False',
      20_000,
    );
    const status = statusOf<GatewayStatus>(gateway);
    const listener = status.listeners?.[0];
    assert.equal(find(listener?.conditions, 'ResolvedRefs')?.reason, 'InvalidCertificateRef');
    assert.match(
      find(listener?.conditions, 'ResolvedRefs')?.message ?? '',
      /^Gateway default\/broken: spec\.listeners\[0\]\.tls\.certificateRefs\[0\]: Secret default\/absent does not exist/,
    );
    assert.equal(find(listener?.conditions, 'Programmed')?.reason, 'Invalid');
    assert.equal(find(status.conditions, 'Programmed')?.status, 'False');
    assert.ok(await reaches(), 'the last good config keeps serving');
    await cluster.admin.delete(broken);
  });

  it('only the Lease holder writes status; the other replica saw the same routes', async () => {
    await cluster.admin.apply(httpRoute(PUBLIC));
    const route = await cluster.admin.waitFor(
      ROUTE,
      (o) =>
        holds(o, ourParent(o)?.conditions, 'Accepted', 'True') &&
        holds(o, ourParent(o)?.conditions, 'ResolvedRefs', 'True'),
      'the HTTPRoute to be accepted again',
      20_000,
    );
    assert.match(
      follower.output(),
      /Service default\/nope does not exist/,
      'the follower read the bad route too',
    );
    for (const object of [await cluster.admin.get(CLASS), await cluster.admin.get(GATEWAY), route])
      assert.deepEqual(statusWriters(object), [`portcullis/${LEADER}`], `${object.kind} status writers`);
  });
});

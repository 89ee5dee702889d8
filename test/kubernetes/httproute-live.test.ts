// `portcullis kubernetes` with the Gateway API CRDs installed (real etcd + kube-apiserver, real
// Envoy): a GatewayClass of ours, a Gateway with an HTTP listener and an HTTPRoute to Service
// `web` serve live; a bad annotation on the HTTPRoute is a RouteRefused Event on it while the last
// good route keeps serving.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../support/kube-client.js';
import { startKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { applyGatewayApiCrds } from '../support/kube-crds.js';
import { spawnKubePortcullis, type KubePortcullis } from '../support/kube-portcullis.js';
import { applySettings, endpointSlice, NS, waitForEvent, webService } from '../support/kube-route-objects.js';
import { sendToListener } from '../support/listener-request.js';
import { startNetnsHost, type NetnsEcho, type NetnsHost } from '../support/netns-host.js';
import { waitFor } from '../support/wait.js';

const GATEWAY_API = 'gateway.networking.k8s.io/v1';

function httpRoute(annotations: Record<string, string>): KubeObject {
  return {
    apiVersion: GATEWAY_API,
    kind: 'HTTPRoute',
    metadata: { name: 'r1', namespace: NS, annotations } as KubeObject['metadata'],
    spec: {
      parentRefs: [{ name: 'edge' }],
      hostnames: ['g1.example.com'],
      rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
    },
  };
}

describe('portcullis kubernetes: HTTPRoutes, live, with the Gateway API installed', () => {
  let cluster: KubeCluster;
  let replica: KubePortcullis;
  let testHost: NetnsHost;
  let backend: NetnsEcho;
  const reaches = async (): Promise<boolean> => {
    const answer = await sendToListener(replica.proxyPort, 'g1.example.com', '/');
    return answer.status === 200 && answer.body.includes('"id":"web-g"');
  };

  before(async () => {
    testHost = await startNetnsHost();
    const address = testHost.address;
    backend = await testHost.startEcho('web-g');
    cluster = await startKubeCluster();
    await applySettings(cluster.admin);
    await applyGatewayApiCrds(cluster.admin);
    await cluster.admin.apply({
      apiVersion: GATEWAY_API,
      kind: 'GatewayClass',
      metadata: { name: 'portcullis' },
      spec: { controllerName: 'portcullis.dev/gateway-controller' },
    });
    await cluster.admin.apply({
      apiVersion: GATEWAY_API,
      kind: 'Gateway',
      metadata: { name: 'edge', namespace: NS },
      spec: {
        gatewayClassName: 'portcullis',
        listeners: [{ name: 'http', port: 80, protocol: 'HTTP', hostname: '*.example.com' }],
      },
    });
    await cluster.admin.apply(webService(backend.port));
    await cluster.admin.apply(endpointSlice('web-1', backend.port, [address]));
    await cluster.admin.apply(httpRoute({ 'portcullis.dev/allow_public_unauthenticated_access': 'true' }));
    replica = await spawnKubePortcullis({
      kubeconfigPath: cluster.kubeconfigPath,
      identity: 'replica-g',
      args: ['--lease-seconds', '3'],
      ready: 'ready: Envoy is serving routes',
    });
  });
  after(async () => {
    await replica?.stop('SIGKILL');
    await cluster?.stop();
    await backend?.stop();
    await testHost?.stop();
  });

  it('an HTTPRoute on our Gateway reaches its backend', async () => {
    await waitFor(reaches, { what: 'g1 to reach the backend', timeoutMs: 20_000 });
    assert.doesNotMatch(replica.output(), /Gateway API CRDs are not installed/);
  });

  it('a bad annotation on the HTTPRoute: an Event on it; the last good route keeps serving', async () => {
    await cluster.admin.apply(
      httpRoute({
        'portcullis.dev/allow_public_unauthenticated_access': 'true',
        'portcullis.dev/timeout': 'soon',
      }),
    );
    const event = await waitForEvent(cluster.admin, 'HTTPRoute', 'r1', 'RouteRefused');
    assert.equal(event['type'], 'Warning');
    assert.match(String(event['message']), /HTTPRoute default\/r1: annotation portcullis\.dev\/timeout/);
    assert.equal((event['involvedObject'] as { apiVersion?: string }).apiVersion, GATEWAY_API);
    assert.ok(await reaches(), 'the last good route keeps serving');
  });
});

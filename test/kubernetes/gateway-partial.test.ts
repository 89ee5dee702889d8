// A partial Gateway API install does not freeze Ingress: with only the HTTPRoute CRD installed (no
// GatewayClass or Gateway CRD, so those two lists fail with 404), `portcullis kubernetes` still
// serves its Ingresses and follows their changes, warning that it builds without the lists it
// cannot read; once the missing CRDs are installed, the retried lists count and an HTTPRoute on a
// Gateway serves, without a restart. Real etcd + kube-apiserver and the real Envoy.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../support/kube-client.js';
import { startKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { applyCrds, gatewayApiCrdDir, GATEWAY_API_CRD_FILES, readYamlObjects } from '../support/kube-crds.js';
import { spawnKubePortcullis, type KubePortcullis } from '../support/kube-portcullis.js';
import {
  applySettings,
  endpointSlice,
  ingress,
  ingressClass,
  NS,
  webService,
} from '../support/kube-route-objects.js';
import { sendToListener } from '../support/listener-request.js';
import { startNetnsHost, type NetnsEcho, type NetnsHost } from '../support/netns-host.js';
import { waitFor } from '../support/wait.js';

const PUBLIC = 'portcullis.dev/allow_public_unauthenticated_access';
const ANY_USER = 'portcullis.dev/allow_any_authenticated_user';
const GATEWAY_API = 'gateway.networking.k8s.io/v1';

/** The standard Gateway API CRDs whose file name matches `pattern`. */
function gatewayCrds(pattern: RegExp): KubeObject[] {
  const dir = gatewayApiCrdDir();
  return GATEWAY_API_CRD_FILES.filter((file) => pattern.test(file)).flatMap((file) =>
    readYamlObjects(join(dir, file)),
  );
}

describe('portcullis kubernetes: a partial Gateway API install (only the HTTPRoute CRD)', () => {
  let cluster: KubeCluster;
  let testHost: NetnsHost;
  let backend: NetnsEcho;
  let replica: KubePortcullis;
  /** Whether a request to `host` reaches the backend (its echo answer) rather than Portcullis. */
  const reaches = async (host: string): Promise<boolean> => {
    const answer = await sendToListener(replica.proxyPort, host, '/');
    return answer.status === 200 && answer.body.includes('"id":"web-partial"');
  };
  /** Waits (30 s) for `check`, with the replica's recent output in the error. */
  const until = (check: () => Promise<boolean>, what: string): Promise<unknown> =>
    waitFor(check, { what, timeoutMs: 30_000, intervalMs: 200 }).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${replica.output().slice(-4000)}`);
    });

  before(async () => {
    testHost = await startNetnsHost();
    backend = await testHost.startEcho('web-partial');
    cluster = await startKubeCluster();
    await applySettings(cluster.admin);
    await applyCrds(cluster.admin, gatewayCrds(/_httproutes\.yaml$/));
    await cluster.admin.apply(ingressClass('portcullis', 'portcullis.dev/ingress-controller'));
    await cluster.admin.apply(webService(backend.port));
    await cluster.admin.apply(endpointSlice('web-1', backend.port, [testHost.address]));
    await cluster.admin.apply(ingress('h1', 'h1.example.com', { [PUBLIC]: 'true' }));
  });
  after(async () => {
    await replica?.stop('SIGKILL');
    await cluster?.stop();
    await backend?.stop();
    await testHost?.stop();
  });

  it('Ingresses serve and change while GatewayClasses and Gateways cannot be listed; installing them serves an HTTPRoute', async () => {
    replica = await spawnKubePortcullis({
      kubeconfigPath: cluster.kubeconfigPath,
      identity: 'replica-partial',
      ready: 'ready: Envoy is serving routes',
    });
    await until(() => reaches('h1.example.com'), 'h1 to reach the backend');
    assert.match(replica.output(), /some Gateway API collections cannot be listed/);
    assert.match(replica.output(), /gatewayClasses: .*404|gatewayClasses: .*not found/i);
    assert.doesNotMatch(replica.output(), /Gateway API CRDs are not installed/, 'the HTTPRoute CRD is');

    // Ingress changes keep building: an annotation change, and a new Ingress.
    await cluster.admin.apply(ingress('h1', 'h1.example.com', { [ANY_USER]: 'true' }));
    await until(async () => !(await reaches('h1.example.com')), 'h1 to need a user');
    await cluster.admin.apply(ingress('h2', 'h2.example.com', { [PUBLIC]: 'true' }));
    await until(() => reaches('h2.example.com'), 'the new Ingress h2 to be served');

    // The rest of the Gateway API arrives: the retried lists list, and a Gateway's HTTPRoute serves.
    await applyCrds(cluster.admin, gatewayCrds(/_(gatewayclasses|gateways)\.yaml$/));
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
      spec: { gatewayClassName: 'portcullis', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
    });
    await cluster.admin.apply({
      apiVersion: GATEWAY_API,
      kind: 'HTTPRoute',
      metadata: { name: 'later', namespace: NS, annotations: { [PUBLIC]: 'true' } } as KubeObject['metadata'],
      spec: {
        parentRefs: [{ name: 'edge' }],
        hostnames: ['later.example.com'],
        rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
      },
    });
    await waitFor(() => reaches('later.example.com'), {
      what: 'the HTTPRoute to reach its backend once the lists are retried',
      timeoutMs: 60_000,
      intervalMs: 250,
    }).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${replica.output().slice(-4000)}`);
    });
    assert.ok(await reaches('h2.example.com'), 'the Ingress still serves');
  });
});

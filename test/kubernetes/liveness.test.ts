// `portcullis kubernetes` is alive before its settings exist: with METRICS_ADDRESS set, /healthz
// answers 200 and /readyz 503 (naming the object it waits for) from start, against a real etcd +
// kube-apiserver; once a valid `global` object arrives the services take over that listener and
// /readyz turns 200 when Envoy has acknowledged the config. A spec field the environment
// overrides with another value is named in one warning. The Gateway API, installed while it runs,
// is picked up without a restart: an HTTPRoute then reaches its backend.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { CRD_PATH } from '../../src/kubernetes/crd-file.js';
import type { KubeObject } from '../support/kube-client.js';
import { startKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { applyCrds, applyGatewayApiCrds, readYamlObjects } from '../support/kube-crds.js';
import { spawnKubePortcullis, type KubePortcullis } from '../support/kube-portcullis.js';
import { endpointSlice, NS, webService } from '../support/kube-route-objects.js';
import { sendToListener } from '../support/listener-request.js';
import { startNetnsHost, type NetnsEcho, type NetnsHost } from '../support/netns-host.js';
import { freePort } from '../support/ports.js';
import { waitFor } from '../support/wait.js';

function secret(name: string, data: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: 'default' },
    data: Object.fromEntries(
      Object.entries(data).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
    ),
  };
}

const GLOBAL: KubeObject = {
  apiVersion: 'portcullis.dev/v1alpha1',
  kind: 'Portcullis',
  metadata: { name: 'global' },
  spec: {
    insecureServer: true,
    // The replica's ADDRESS variable names another: it wins, with a warning.
    address: ':8443',
    authenticate: { url: 'https://authenticate.example.com' },
    identityProvider: { url: 'http://127.0.0.1:9/', secret: { name: 'idp' } },
    secrets: { name: 'core' },
  },
};

describe('portcullis kubernetes: health before the settings exist', () => {
  let cluster: KubeCluster;
  let replica: KubePortcullis | undefined;
  let testHost: NetnsHost | undefined;
  let backend: NetnsEcho | undefined;

  before(async () => {
    cluster = await startKubeCluster();
    await applyCrds(cluster.admin, readYamlObjects(CRD_PATH));
    await cluster.admin.apply(
      secret('core', {
        shared_secret: randomBytes(32).toString('base64'),
        cookie_secret: randomBytes(32).toString('base64'),
      }),
    );
    await cluster.admin.apply(secret('idp', { client_id: 'portcullis', client_secret: 'made-at-test-time' }));
  });
  after(async () => {
    await replica?.stop('SIGKILL');
    await cluster?.stop();
    await backend?.stop();
    await testHost?.stop();
  });

  it('/healthz 200 and /readyz 503 while no object exists; /readyz 200 once a valid one started the services', async () => {
    const metricsPort = await freePort();
    const base = `http://127.0.0.1:${metricsPort}`;
    replica = await spawnKubePortcullis({
      kubeconfigPath: cluster.kubeconfigPath,
      identity: 'replica-waiting',
      ready: 'watching Portcullis global',
      env: { METRICS_ADDRESS: `127.0.0.1:${metricsPort}` },
    });
    const alive = await fetch(`${base}/healthz`);
    assert.equal(alive.status, 200);
    const waiting = await fetch(`${base}/readyz`);
    assert.equal(waiting.status, 503);
    assert.deepEqual(await waiting.json(), {
      ready: false,
      checks: { settings: "waiting for a valid Portcullis object 'global'" },
    });
    assert.equal((await fetch(`${base}/metrics`)).status, 503, '/metrics has nothing to report yet');

    await cluster.admin.apply(GLOBAL);
    const started = replica;
    await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, {
      what: '/readyz 200 after a valid settings object',
      timeoutMs: 60_000,
      intervalMs: 200,
    }).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${started.output().slice(-4000)}`);
    });
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    const metrics = await fetch(`${base}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /portcullis_/);
    const output = replica.output();
    assert.match(output, /health listening on METRICS_ADDRESS before the settings/);
    assert.doesNotMatch(output, /metrics_address is overridden/, 'the environment names the same address');
    assert.doesNotMatch(output, /made-at-test-time/);
    const overridden = output.match(/the environment variable ADDRESS overrides spec\.address/g) ?? [];
    assert.equal(overridden.length, 1, 'one warning for the overridden field');
    assert.doesNotMatch(output, /METRICS_ADDRESS overrides/);
  });

  it('the Gateway API installed while it runs is read without a restart: an HTTPRoute reaches its backend', async () => {
    assert.ok(replica !== undefined, 'the replica of the first test runs');
    const running = replica;
    assert.match(
      running.output(),
      /Gateway API CRDs are not installed: routes come from Ingress only until they are/,
    );
    testHost = await startNetnsHost();
    backend = await testHost.startEcho('web-later');
    await cluster.admin.apply(webService(backend.port));
    await cluster.admin.apply(endpointSlice('web-1', backend.port, [testHost.address]));
    await applyGatewayApiCrds(cluster.admin);
    const gatewayApi = 'gateway.networking.k8s.io/v1';
    await cluster.admin.apply({
      apiVersion: gatewayApi,
      kind: 'GatewayClass',
      metadata: { name: 'portcullis' },
      spec: { controllerName: 'portcullis.dev/gateway-controller' },
    });
    await cluster.admin.apply({
      apiVersion: gatewayApi,
      kind: 'Gateway',
      metadata: { name: 'edge', namespace: NS },
      spec: { gatewayClassName: 'portcullis', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
    });
    await cluster.admin.apply({
      apiVersion: gatewayApi,
      kind: 'HTTPRoute',
      metadata: {
        name: 'later',
        namespace: NS,
        annotations: { 'portcullis.dev/allow_public_unauthenticated_access': 'true' },
      } as KubeObject['metadata'],
      spec: {
        parentRefs: [{ name: 'edge' }],
        hostnames: ['later.example.com'],
        rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
      },
    });
    await waitFor(
      async () => {
        const answer = await sendToListener(running.proxyPort, 'later.example.com', '/');
        return answer.status === 200 && answer.body.includes('"id":"web-later"');
      },
      { what: 'the HTTPRoute to reach its backend', timeoutMs: 30_000, intervalMs: 200 },
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${running.output().slice(-4000)}`);
    });
    assert.match(
      running.output(),
      /the Gateway API CRDs are installed: reading GatewayClasses, Gateways and HTTPRoutes/,
    );
  });
});

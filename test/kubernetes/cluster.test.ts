// The test harness itself against a real etcd and kube-apiserver (built by `npm run setup:kubernetes`):
// it starts them, CRDs (one made here, the Gateway API's from the pinned module) become Established,
// RBAC limits a service account's token, and stop() leaves nothing behind.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { serviceAccountWithAccess } from '../support/kube-access.js';
import { hasCondition, KubeApiError, type KubeObject } from '../support/kube-client.js';
import { kubeBinary, startKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { applyCrds, applyGatewayApiCrds } from '../support/kube-crds.js';

/** A tiny namespaced CRD: kind Widget in group test.portcullis.dev, `spec.size` an integer 1..10. */
const WIDGET_CRD: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.test.portcullis.dev' },
  spec: {
    group: 'test.portcullis.dev',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['size'],
                properties: { size: { type: 'integer', minimum: 1, maximum: 10 } },
              },
            },
          },
        },
      },
    ],
  },
};

const widget = (size: unknown): KubeObject => ({
  apiVersion: 'test.portcullis.dev/v1',
  kind: 'Widget',
  metadata: { name: 'one', namespace: 'default' },
  spec: { size },
});

/** Whether process `pid` exists (signal 0 only checks). */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

describe('the kubernetes test harness (real etcd and kube-apiserver)', () => {
  let cluster: KubeCluster;

  before(async () => {
    cluster = await startKubeCluster();
  });
  after(async () => {
    await cluster?.stop();
  });

  it('starts both servers on loopback and answers the admin token; the kubeconfig names them', async (t) => {
    t.diagnostic(`etcd + kube-apiserver ready (/readyz ok) in ${cluster.startupMs} ms`);
    assert.match(cluster.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const version = await cluster.admin.request('GET', '/version');
    assert.equal(version.status, 200);
    assert.equal((version.body as { gitVersion?: string }).gitVersion, 'v1.37.2');
    const config = parse(readFileSync(cluster.kubeconfigPath, 'utf8')) as {
      clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
      users: { user: { token: string } }[];
    };
    assert.equal(config.clusters[0]?.cluster.server, cluster.url);
    assert.equal(
      Buffer.from(config.clusters[0]?.cluster['certificate-authority-data'] ?? '', 'base64').toString(),
      cluster.caPem,
    );
    assert.equal(config.users[0]?.user.token, cluster.adminToken);
    // A wrong token is refused: authentication is on.
    const stranger = cluster.clientFor('not-a-token');
    assert.equal((await stranger.request('GET', '/api/v1/namespaces')).status, 401);
  });

  it('serves a CRD made in the test once Established, with its schema enforced', async () => {
    await applyCrds(cluster.admin, [WIDGET_CRD]);
    assert.ok(hasCondition(await cluster.admin.get(WIDGET_CRD), 'Established'));
    const stored = await cluster.admin.apply(widget(3));
    assert.deepEqual(stored['spec'], { size: 3 });
    assert.deepEqual((await cluster.admin.get(widget(3)))['spec'], { size: 3 });
    await assert.rejects(cluster.admin.apply(widget(11)), (err: unknown) => {
      assert.ok(err instanceof KubeApiError);
      assert.equal(err.status, 422);
      assert.match(err.message, /spec\.size/);
      return true;
    });
    await cluster.admin.delete(widget(3));
    await assert.rejects(cluster.admin.get(widget(3)), { status: 404 });
    await assert.rejects(cluster.admin.delete(widget(3)), { status: 404 });
    await cluster.admin.delete(widget(3), { ignoreMissing: true });
  });

  it('applies the standard Gateway API CRDs from the pinned module and serves their kinds', async (t) => {
    const startedAt = performance.now();
    const crds = await applyGatewayApiCrds(cluster.admin);
    t.diagnostic(`Gateway API CRDs Established in ${Math.round(performance.now() - startedAt)} ms`);
    assert.deepEqual(crds.map((crd) => crd.metadata.name).sort(), [
      'gatewayclasses.gateway.networking.k8s.io',
      'gateways.gateway.networking.k8s.io',
      'httproutes.gateway.networking.k8s.io',
      'referencegrants.gateway.networking.k8s.io',
    ]);
    const route = await cluster.admin.apply({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'app', namespace: 'default' },
      spec: {
        parentRefs: [{ name: 'portcullis' }],
        hostnames: ['app.example.com'],
        rules: [{ backendRefs: [{ name: 'app', port: 8080 }] }],
      },
    });
    // Defaults from the CRD's schema were applied: the API server really validated it.
    const rules = (route['spec'] as { rules: { matches?: { path?: { type?: string; value?: string } }[] }[] })
      .rules;
    assert.deepEqual(rules[0]?.matches?.[0]?.path, { type: 'PathPrefix', value: '/' });
    await cluster.admin.apply({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'portcullis' },
      spec: { controllerName: 'portcullis.dev/gateway-controller' },
    });
    assert.equal(
      (await cluster.admin.list({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass' })).length,
      1,
    );
  });

  it("refuses a service account's token what its role does not grant (403) and allows what it does", async () => {
    const namespace = 'rbac-test';
    const access = await serviceAccountWithAccess(cluster, {
      namespace,
      name: 'reader',
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
    });
    assert.equal(access.username, 'system:serviceaccount:rbac-test:reader');
    const configMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace },
      data: { a: '1' },
    };
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'keys', namespace },
      stringData: { k: 'v' },
    };
    await cluster.admin.apply(configMap);
    await cluster.admin.apply(secret);

    assert.deepEqual((await access.client.get(configMap))['data'], { a: '1' });
    assert.equal((await access.client.list({ apiVersion: 'v1', kind: 'ConfigMap', namespace })).length, 1);
    await assert.rejects(access.client.get(secret), { status: 403 });
    await assert.rejects(access.client.list({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default' }), {
      status: 403,
    });
    await assert.rejects(access.client.apply({ ...configMap, data: { a: '2' } }), { status: 403 });
    assert.deepEqual((await cluster.admin.get(configMap))['data'], { a: '1' });
  });

  it('stop() ends both processes and removes the temp dir', async () => {
    const dir = dirname(cluster.kubeconfigPath);
    assert.equal(cluster.pids.length, 2);
    for (const pid of cluster.pids) assert.ok(processExists(pid), `process ${pid} runs before stop()`);
    await cluster.stop();
    for (const pid of cluster.pids) assert.ok(!processExists(pid), `process ${pid} is gone after stop()`);
    assert.ok(!existsSync(dir), `${dir} is removed`);
    await cluster.stop(); // idempotent
  });
});

/** Pids of this process's children (of its main thread, which spawns them). */
function childPids(): number[] {
  return readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8')
    .trim()
    .split(/\s+/)
    .filter((pid) => pid !== '')
    .map(Number);
}

/** The harness's temp dirs now present. */
function kubeTempDirs(): string[] {
  return readdirSync(tmpdir()).filter((name) => name.startsWith('portcullis-kube-'));
}

describe('the kubernetes test harness when a binary is missing or fails', () => {
  const withApiserverBin = async (path: string, body: () => Promise<void> | void): Promise<void> => {
    const saved = process.env['KUBE_APISERVER_BIN'];
    process.env['KUBE_APISERVER_BIN'] = path;
    try {
      await body();
    } finally {
      if (saved === undefined) delete process.env['KUBE_APISERVER_BIN'];
      else process.env['KUBE_APISERVER_BIN'] = saved;
    }
  };

  it('fails naming the missing binary and how to build it', async () => {
    await withApiserverBin('/nonexistent/kube-apiserver', () => {
      assert.throws(
        () => kubeBinary('kube-apiserver'),
        /kube-apiserver not found at \/nonexistent\/kube-apiserver\. Build it with `npm run setup:kubernetes`/,
      );
    });
  });

  it('stops etcd and removes its temp dir when kube-apiserver exits during start', async () => {
    const dirsBefore = kubeTempDirs();
    const childrenBefore = childPids();
    await withApiserverBin('/bin/false', async () => {
      await assert.rejects(
        startKubeCluster(),
        /kube-apiserver exited \(1\) before kube-apiserver on https:\/\/127\.0\.0\.1:\d+ to answer \/readyz ok/,
      );
    });
    assert.deepEqual(childPids(), childrenBefore, 'no child process (etcd) is left');
    assert.deepEqual(kubeTempDirs(), dirsBefore, 'no temp dir is left');
  });
});

/**
 * deploy/kubernetes checked without a cluster: each kustomization lists exactly the files of its
 * folder, every file parses, the Deployment's ports, probes, env, Services and PDB agree, every
 * container is locked down, no RBAC rule has a wildcard, the RBAC names every Secret the examples
 * reference, and the example objects with the Deployment's environment give settings and routes
 * that parseConfig accepts. test/kubernetes/manifests.test.ts applies them to a real API server.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseConfig } from '../../../src/config/parse-config.js';
import type {
  EndpointSlice,
  Gateway,
  GatewayClass,
  HTTPRoute,
  Ingress,
  IngressClass,
  Service,
} from '../../../src/kubernetes/objects.js';
import {
  attributeProblems,
  kubernetesRoutes,
  withKubernetesRoutes,
} from '../../../src/kubernetes/route-source.js';
import type { ReadSecret, SecretData } from '../../../src/kubernetes/secret-refs.js';
import { refuseFileRead, settingsDocument } from '../../../src/kubernetes/settings-document.js';
import { formatProblem } from '../../../src/shared/errors.js';
import {
  DEPLOY_DIR,
  deployFiles,
  findObject,
  kustomizationObjects,
  kustomizations,
  manifestObjects,
} from '../../support/kube-manifests.js';
import { generateTestCertificate } from '../../support/test-certs.js';

/** The shapes of a pod template this test reads. */
interface Container {
  name: string;
  env?: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  ports?: { name: string; containerPort: number }[];
  startupProbe?: { httpGet?: { path: string; port: string } };
  livenessProbe?: { httpGet?: { path: string; port: string } };
  readinessProbe?: { httpGet?: { path: string; port: string } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    capabilities?: { drop?: string[] };
  };
}
interface PodTemplate {
  metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    serviceAccountName?: string;
    securityContext?: { runAsNonRoot?: boolean; seccompProfile?: { type: string } };
    containers: Container[];
  };
}
interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

const CLUSTER_SCOPED = new Set([
  'Namespace',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'IngressClass',
  'GatewayClass',
  'Portcullis',
]);

const base = kustomizationObjects('');
const deployment = findObject(base, 'Deployment', 'portcullis');
const pod = (deployment['spec'] as { template: PodTemplate }).template;
const container = pod.spec.containers[0] as Container;
const exampleObjects = [
  ...manifestObjects('example/example-global.yaml'),
  ...manifestObjects('example/example-httproute.yaml'),
];

/** The Deployment's plain environment variables (name -> value). */
function plainEnv(): Record<string, string> {
  return Object.fromEntries(
    (container.env ?? []).flatMap((entry) => (entry.value === undefined ? [] : [[entry.name, entry.value]])),
  );
}

/** The port of a `host:port` or `:port` address. */
const portOf = (address: string): number => Number(address.slice(address.lastIndexOf(':') + 1));

test('each kustomization lists exactly the YAML files of its folder; the rest are the examples', () => {
  const found = kustomizations();
  assert.deepEqual(found.map((kustomization) => kustomization.dir).sort(), ['', 'gateway-api', 'redis']);
  for (const { dir, resources } of found) {
    const files = readdirSync(join(DEPLOY_DIR, dir), { withFileTypes: true })
      .filter((entry) => entry.isFile() && /\.ya?ml$/.test(entry.name) && entry.name !== 'kustomization.yaml')
      .map((entry) => entry.name);
    assert.deepEqual([...resources].sort(), files.sort(), `deploy/kubernetes/${dir}/kustomization.yaml`);
  }
  const listed = found.flatMap(({ dir, resources }) => resources.map((file) => join(dir, file)));
  const others = deployFiles().filter(
    (file) => !file.endsWith('kustomization.yaml') && !listed.includes(file),
  );
  assert.deepEqual(others, ['example/example-global.yaml', 'example/example-httproute.yaml']);
});

test('every manifest parses; every object names its kind and, when namespaced, its namespace', () => {
  const files = deployFiles();
  assert.ok(files.length >= 13, `found ${files.length} files`);
  for (const file of files.filter((name) => !name.endsWith('kustomization.yaml'))) {
    const objects = manifestObjects(file);
    assert.ok(objects.length > 0, `${file} holds objects`);
    for (const object of objects) {
      const what = `${file}: ${object.kind} ${object.metadata?.name}`;
      assert.match(String(object.apiVersion), /^[a-z0-9.]*\/?v\d/, what);
      assert.ok(typeof object.metadata?.name === 'string' && object.metadata.name !== '', what);
      assert.equal(CLUSTER_SCOPED.has(object.kind), object.metadata.namespace === undefined, what);
    }
  }
});

test("the Deployment's ports, probes, env, Services, PDB and scrape annotations agree", () => {
  const env = plainEnv();
  const ports = new Map((container.ports ?? []).map((port) => [port.name, port.containerPort]));
  assert.equal(ports.get('https'), portOf(env['ADDRESS'] ?? ''), 'ADDRESS is the https port');
  assert.equal(
    ports.get('metrics'),
    portOf(env['METRICS_ADDRESS'] ?? ''),
    'METRICS_ADDRESS is the metrics port',
  );
  assert.deepEqual(container.startupProbe?.httpGet, { path: '/healthz', port: 'metrics' });
  assert.deepEqual(container.livenessProbe?.httpGet, { path: '/healthz', port: 'metrics' });
  assert.deepEqual(container.readinessProbe?.httpGet, { path: '/readyz', port: 'metrics' });
  assert.deepEqual(
    (container.env ?? [])
      .filter((entry) => entry.valueFrom?.fieldRef !== undefined)
      .map((entry) => entry.name),
    ['POD_NAME', 'POD_NAMESPACE', 'POD_IP'],
  );
  assert.equal((deployment['spec'] as { replicas: number }).replicas, 2);
  assert.ok(container.resources?.requests?.['memory'] && container.resources.limits?.['memory']);
  const annotations = pod.metadata.annotations ?? {};
  assert.equal(annotations['prometheus.io/scrape'], 'true');
  assert.equal(Number(annotations['prometheus.io/port']), ports.get('metrics'));
  assert.equal(annotations['prometheus.io/path'], '/metrics');

  const labels = pod.metadata.labels;
  const selects = (selector: Record<string, string>): boolean =>
    Object.entries(selector).every(([key, value]) => labels[key] === value);
  const services = base.filter((object) => object.kind === 'Service');
  assert.deepEqual(services.map((service) => service.metadata.name).sort(), [
    'portcullis',
    'portcullis-metrics',
  ]);
  for (const service of services) {
    const spec = service['spec'] as { selector: Record<string, string>; ports: { targetPort: string }[] };
    assert.ok(selects(spec.selector), `Service ${service.metadata.name} selects the pods`);
    for (const port of spec.ports)
      assert.ok(ports.has(port.targetPort), `targetPort ${port.targetPort} exists`);
  }
  const pdb = findObject(base, 'PodDisruptionBudget', 'portcullis');
  assert.ok(
    selects((pdb['spec'] as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels),
  );
  // The pods run as the ServiceAccount the bindings grant.
  const account = findObject(base, 'ServiceAccount', pod.spec.serviceAccountName ?? '');
  for (const binding of base.filter((object) => object.kind.endsWith('RoleBinding'))) {
    assert.deepEqual(binding['subjects'], [
      { kind: 'ServiceAccount', name: account.metadata.name, namespace: account.metadata.namespace },
    ]);
  }
});

test('every container runs as non-root, read-only, without capabilities, under RuntimeDefault seccomp', () => {
  const pods = [...base, ...manifestObjects('redis/redis.yaml')].filter(
    (object) => object.kind === 'Deployment',
  );
  assert.equal(pods.length, 2);
  for (const object of pods) {
    const template = (object['spec'] as { template: PodTemplate }).template;
    assert.equal(template.spec.securityContext?.runAsNonRoot, true, object.metadata.name);
    assert.equal(template.spec.securityContext?.seccompProfile?.type, 'RuntimeDefault', object.metadata.name);
    for (const each of template.spec.containers) {
      assert.deepEqual(
        each.securityContext,
        { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
        `${object.metadata.name}/${each.name}`,
      );
    }
  }
});

/** Every RBAC rule of the manifests, with the object holding it. */
function rbacRules(): { where: string; namespace: string | undefined; rule: Rule }[] {
  return [...base, ...exampleObjects]
    .filter((object) => object.kind === 'Role' || object.kind === 'ClusterRole')
    .flatMap((object) =>
      (object['rules'] as Rule[]).map((rule) => ({
        where: `${object.kind} ${object.metadata.name}`,
        namespace: object.metadata.namespace,
        rule,
      })),
    );
}

test('no RBAC rule has a wildcard, and Secrets are granted by name only', () => {
  for (const { where, rule } of rbacRules()) {
    for (const word of [...rule.apiGroups, ...rule.resources, ...rule.verbs, ...(rule.resourceNames ?? [])])
      assert.ok(!word.includes('*'), `${where}: ${word}`);
    if (rule.resources.includes('secrets')) {
      assert.ok((rule.resourceNames ?? []).length > 0, `${where} names the Secrets it grants`);
      assert.ok(where.startsWith('Role '), `${where}: Secrets only in a namespaced Role`);
    }
  }
});

test('the RBAC grants every Secret the examples name, in its namespace', () => {
  const granted = (namespace: string, name: string): boolean =>
    rbacRules().some(
      ({ namespace: at, rule }) =>
        at === namespace && rule.resources.includes('secrets') && (rule.resourceNames ?? []).includes(name),
    );
  const settings = findObject(exampleObjects, 'Portcullis', 'global');
  const named = settingsDocument({
    spec: settings['spec'],
    namespace: 'portcullis',
    readSecret: () => undefined,
  }).secrets;
  assert.deepEqual(named.map((secret) => secret.name).sort(), [
    'idp',
    'portcullis',
    'portcullis-tls',
    'redis',
  ]);
  const fromRoutes = exampleObjects.flatMap((object) => {
    const namespace = object.metadata.namespace ?? '';
    if (object.kind === 'Ingress')
      return ((object as unknown as Ingress).spec?.tls ?? []).map((tls) => ({
        namespace,
        name: tls.secretName ?? '',
      }));
    if (object.kind === 'Gateway')
      return (object as unknown as Gateway).spec.listeners.flatMap((listener) =>
        (listener.tls?.certificateRefs ?? []).map((ref) => ({ namespace, name: ref.name })),
      );
    return [];
  });
  assert.ok(fromRoutes.length >= 2);
  for (const secret of [...named, ...fromRoutes])
    assert.ok(granted(secret.namespace, secret.name), `Secret ${secret.namespace}/${secret.name} is granted`);
});

/** Secrets made for this run with the keys the examples' comments say to create. */
function exampleSecrets(): ReadSecret {
  const signingKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  const authenticate = generateTestCertificate('authenticate.example.com');
  const shop = generateTestCertificate('shop.example.com');
  const password = randomBytes(12).toString('hex');
  const store: Record<string, Record<string, string>> = {
    'portcullis/portcullis': {
      shared_secret: `${randomBytes(32).toString('base64')}\n`,
      cookie_secret: `${randomBytes(32).toString('base64')}\n`,
      signing_key: signingKey,
    },
    'portcullis/idp': { client_id: 'portcullis', client_secret: randomBytes(16).toString('hex') },
    'portcullis/redis': { password, connection: `redis://:${password}@redis.portcullis.svc:6379` },
    'portcullis/portcullis-tls': { 'tls.crt': authenticate.certPem, 'tls.key': authenticate.keyPem },
    'shop/shop-tls': { 'tls.crt': shop.certPem, 'tls.key': shop.keyPem },
  };
  return ({ namespace, name }) => {
    const data = store[`${namespace}/${name}`];
    if (data === undefined) return undefined;
    return Object.fromEntries(
      Object.entries(data).map(([key, text]) => [key, new TextEncoder().encode(text)]),
    ) as SecretData;
  };
}

/** A Service in `shop` with one port and an EndpointSlice with one ready address. */
function backend(name: string, port: number, named?: string): { service: Service; slice: EndpointSlice } {
  return {
    service: {
      metadata: { name, namespace: 'shop' },
      spec: {
        type: 'ClusterIP',
        ports: [{ ...(named === undefined ? {} : { name: named }), port, targetPort: port }],
      },
    },
    slice: {
      metadata: { name: `${name}-1`, namespace: 'shop', labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: [{ ...(named === undefined ? {} : { name: named }), port, protocol: 'TCP' }],
      endpoints: [{ addresses: ['10.1.0.5'], conditions: { ready: true } }],
    },
  };
}

test("the example objects, their Secrets and the Deployment's environment give a config parseConfig accepts", () => {
  const readSecret = exampleSecrets();
  const settings = settingsDocument({
    spec: findObject(exampleObjects, 'Portcullis', 'global')['spec'],
    namespace: 'portcullis',
    readSecret,
  });
  assert.deepEqual(settings.problems.map(formatProblem), []);
  const web = backend('web', 80, 'http');
  const api = backend('api', 8080);
  const of = <T>(kind: string): T[] =>
    [...base, ...manifestObjects('gateway-api/gatewayclass.yaml'), ...exampleObjects].filter(
      (object) => object.kind === kind,
    ) as unknown as T[];
  const source = kubernetesRoutes({
    ingressClasses: of<IngressClass>('IngressClass'),
    ingresses: of<Ingress>('Ingress'),
    gatewayClasses: of<GatewayClass>('GatewayClass'),
    gateways: of<Gateway>('Gateway'),
    httpRoutes: of<HTTPRoute>('HTTPRoute'),
    services: [web.service, api.service],
    endpointSlices: [web.slice, api.slice],
    secrets: readSecret,
  });
  assert.deepEqual(source.problems, []);
  assert.deepEqual(source.skipped, []);
  // shop.example.com: `prefix: /`, and /admin as `path` plus `prefix: /admin/`; api.example.com/v1 likewise.
  assert.equal(source.routes.length, 5);
  const { document, origins } = withKubernetesRoutes(settings.document, source);
  const parsed = parseConfig({ document, env: plainEnv(), readText: refuseFileRead });
  assert.deepEqual(
    [...settings.fieldProblems(parsed.problems).map(formatProblem)],
    [],
    'the settings and routes are valid',
  );
  assert.deepEqual(attributeProblems(parsed.problems, origins).objects, []);
  assert.ok(parsed.config);
  assert.equal(parsed.config.routes.length, 5);
  // portcullis-tls, and shop-tls once though the Ingress and the Gateway both name it.
  assert.equal(parsed.config.certificates.length, 2);
});

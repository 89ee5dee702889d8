// deploy/kubernetes against a real kube-apiserver and etcd: every manifest applies with
// server-side apply (the CRD first, the Gateway API CRDs from the pinned module; no kubelet runs,
// so the Deployment is only stored), the example settings object is stored as written (the CRD's
// schema prunes nothing), and the controller's ServiceAccount can do exactly what rbac.yaml and
// the example's Role grant: each allowed verb is allowed, the rules the API server reports for it
// are exactly those, and real requests outside them are refused.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { serviceAccountWithAccess, type ServiceAccountAccess } from '../support/kube-access.js';
import { KubeApiError, type KubeClient, type KubeObject } from '../support/kube-client.js';
import { startKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { applyCrds, applyGatewayApiCrds } from '../support/kube-crds.js';
import { findObject, kustomizationObjects, manifestObjects } from '../support/kube-manifests.js';
import { waitFor } from '../support/wait.js';

/** One access check: a verb on a resource (`portcullises/status` for a subresource), where. */
interface Access {
  readonly group: string;
  readonly resource: string;
  readonly verb: string;
  /** Unset: cluster-wide (every namespace, for a namespaced resource). */
  readonly namespace?: string;
  readonly name?: string;
}

const CORE = '';
const NET = 'networking.k8s.io';
const GW = 'gateway.networking.k8s.io';
const LEASES = 'coordination.k8s.io';

/** `verbs` on each of `resources` of `group`, with the same place. */
function each(
  group: string,
  resources: readonly string[],
  verbs: readonly string[],
  where: { namespace?: string; names?: readonly string[] } = {},
): Access[] {
  return resources.flatMap((resource) =>
    verbs.flatMap((verb) =>
      (where.names ?? [undefined]).map((name) => ({
        group,
        resource,
        verb,
        ...(where.namespace === undefined ? {} : { namespace: where.namespace }),
        ...(name === undefined ? {} : { name }),
      })),
    ),
  );
}

/**
 * What the controller does, and so what must be allowed (rbac.yaml and the example's Role):
 * everything cluster-wide but the Secrets and the Lease, which are granted by namespace and name.
 */
const ALLOWED: readonly Access[] = [
  ...each('portcullis.dev', ['portcullises'], ['get', 'list', 'watch']),
  ...each('portcullis.dev', ['portcullises/status'], ['update', 'patch']),
  ...each(NET, ['ingresses', 'ingressclasses'], ['list', 'watch']),
  ...each(NET, ['ingresses/status'], ['update', 'patch']),
  ...each(CORE, ['services'], ['list', 'watch']),
  ...each('discovery.k8s.io', ['endpointslices'], ['list', 'watch']),
  ...each(GW, ['gatewayclasses', 'gateways', 'httproutes'], ['list', 'watch']),
  ...each(GW, ['gatewayclasses/status', 'gateways/status', 'httproutes/status'], ['update', 'patch']),
  ...each('apiextensions.k8s.io', ['customresourcedefinitions'], ['list', 'watch'], {
    names: ['httproutes.gateway.networking.k8s.io'],
  }),
  ...each(CORE, ['events'], ['create', 'patch']),
  ...each('events.k8s.io', ['events'], ['create', 'patch']),
  ...each(CORE, ['secrets'], ['get', 'list', 'watch'], {
    namespace: 'portcullis',
    names: ['portcullis', 'idp', 'redis', 'portcullis-tls'],
  }),
  ...each(CORE, ['secrets'], ['get', 'list', 'watch'], { namespace: 'shop', names: ['shop-tls'] }),
  ...each(LEASES, ['leases'], ['create'], { namespace: 'portcullis' }),
  ...each(LEASES, ['leases'], ['get', 'update'], { namespace: 'portcullis', names: ['portcullis-status'] }),
];

/** What it never does: each must be refused. */
const DENIED: readonly Access[] = [
  { group: CORE, resource: 'secrets', verb: 'list' },
  { group: CORE, resource: 'secrets', verb: 'watch' },
  { group: CORE, resource: 'secrets', verb: 'list', namespace: 'portcullis' },
  { group: CORE, resource: 'secrets', verb: 'get', namespace: 'portcullis', name: 'other' },
  { group: CORE, resource: 'secrets', verb: 'get', namespace: 'shop', name: 'other' },
  { group: CORE, resource: 'secrets', verb: 'get', namespace: 'default', name: 'portcullis' },
  { group: CORE, resource: 'secrets', verb: 'create', namespace: 'portcullis' },
  { group: CORE, resource: 'secrets', verb: 'update', namespace: 'portcullis', name: 'portcullis' },
  { group: NET, resource: 'ingresses', verb: 'delete', namespace: 'shop', name: 'shop' },
  { group: NET, resource: 'ingresses', verb: 'update', namespace: 'shop', name: 'shop' },
  { group: NET, resource: 'ingresses', verb: 'create', namespace: 'shop' },
  { group: 'apps', resource: 'deployments', verb: 'update', namespace: 'portcullis', name: 'portcullis' },
  { group: 'portcullis.dev', resource: 'portcullises', verb: 'update', name: 'global' },
  { group: 'portcullis.dev', resource: 'portcullises', verb: 'delete', name: 'global' },
  { group: GW, resource: 'httproutes', verb: 'patch', namespace: 'shop', name: 'api' },
  { group: LEASES, resource: 'leases', verb: 'update', namespace: 'portcullis', name: 'other' },
  { group: LEASES, resource: 'leases', verb: 'delete', namespace: 'portcullis', name: 'portcullis-status' },
  { group: LEASES, resource: 'leases', verb: 'create', namespace: 'default' },
  { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', verb: 'list' },
  {
    group: 'apiextensions.k8s.io',
    resource: 'customresourcedefinitions',
    verb: 'get',
    name: 'httproutes.gateway.networking.k8s.io',
  },
  { group: CORE, resource: 'configmaps', verb: 'list' },
  { group: CORE, resource: 'pods', verb: 'list' },
  { group: CORE, resource: 'namespaces', verb: 'list' },
  { group: CORE, resource: 'services', verb: 'create', namespace: 'shop' },
  { group: CORE, resource: 'events', verb: 'delete', namespace: 'default' },
  {
    group: CORE,
    resource: 'serviceaccounts/token',
    verb: 'create',
    namespace: 'portcullis',
    name: 'portcullis',
  },
];

const text = (access: Access): string =>
  `${access.verb} ${access.group || 'core'}/${access.resource}${access.name === undefined ? '' : `/${access.name}`} in ${access.namespace ?? 'every namespace'}`;

/** Whether `client`'s identity may do `access`, from a SelfSubjectAccessReview. */
async function allowed(client: KubeClient, access: Access): Promise<boolean> {
  const [resource, subresource] = access.resource.split('/');
  const answer = await client.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    spec: {
      resourceAttributes: {
        group: access.group,
        resource,
        verb: access.verb,
        ...(subresource === undefined ? {} : { subresource }),
        ...(access.namespace === undefined ? {} : { namespace: access.namespace }),
        ...(access.name === undefined ? {} : { name: access.name }),
      },
    },
  });
  assert.equal(answer.status, 201, JSON.stringify(answer.body));
  return (answer.body as { status: { allowed: boolean } }).status.allowed;
}

/**
 * The resource rules the API server reports for `client`'s identity in `namespace`
 * (SelfSubjectRulesReview: its ClusterRoles and the Roles bound there), one line per
 * verb/group/resource/name.
 */
async function ruleLines(client: KubeClient, namespace: string): Promise<Set<string>> {
  const answer = await client.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectRulesReview',
    spec: { namespace },
  });
  assert.equal(answer.status, 201, JSON.stringify(answer.body));
  const rules = (
    answer.body as {
      status: {
        resourceRules: {
          verbs: string[];
          apiGroups?: string[];
          resources?: string[];
          resourceNames?: string[];
        }[];
      };
    }
  ).status.resourceRules;
  const lines = new Set<string>();
  for (const rule of rules)
    for (const verb of rule.verbs)
      for (const group of rule.apiGroups ?? [''])
        for (const resource of rule.resources ?? [])
          for (const name of rule.resourceNames ?? ['*any*'])
            lines.add(`${verb} ${group || 'core'}/${resource} ${name}`);
  return lines;
}

/** The rules ALLOWED implies in `namespace` (a cluster-wide grant counts in every namespace). */
function expectedLines(namespace: string): Set<string> {
  return new Set(
    ALLOWED.filter((access) => access.namespace === undefined || access.namespace === namespace).map(
      (access) => `${access.verb} ${access.group || 'core'}/${access.resource} ${access.name ?? '*any*'}`,
    ),
  );
}

describe('deploy/kubernetes on a real API server', () => {
  let cluster: KubeCluster;
  let controller: ServiceAccountAccess;

  before(async () => {
    cluster = await startKubeCluster();
  });
  after(async () => {
    await cluster?.stop();
  });

  it('applies every manifest with server-side apply: the base, the GatewayClass, the example Redis and the examples', async () => {
    const admin = cluster.admin;
    const base = kustomizationObjects('');
    const crds = base.filter((object) => object.kind === 'CustomResourceDefinition');
    assert.deepEqual(
      crds.map((crd) => crd.metadata.name),
      ['portcullises.portcullis.dev'],
    );
    await applyCrds(admin, crds);
    await applyGatewayApiCrds(admin);
    const rest: KubeObject[] = [
      ...base.filter((object) => object.kind !== 'CustomResourceDefinition'),
      ...kustomizationObjects('gateway-api'),
      ...kustomizationObjects('redis'),
      ...manifestObjects('example/example-global.yaml'),
      ...manifestObjects('example/example-httproute.yaml'),
    ];
    // Namespaces first, as kubectl apply -k orders them.
    rest.sort((a, b) => Number(b.kind === 'Namespace') - Number(a.kind === 'Namespace'));
    for (const object of rest) {
      const stored = await admin.apply(object).catch((err: unknown) => {
        throw new Error(`${object.kind} ${object.metadata.name}: ${String(err)}`);
      });
      assert.equal(stored.metadata.name, object.metadata.name);
    }
    for (const object of rest) await admin.get(object);
    // The Deployment is stored as written (no kubelet runs it).
    const deployment = await admin.get(findObject(base, 'Deployment', 'portcullis'));
    assert.equal((deployment['spec'] as { replicas: number }).replicas, 2);
  });

  it('stores the example settings object as written: the CRD schema prunes none of its fields', async () => {
    const example = findObject(manifestObjects('example/example-global.yaml'), 'Portcullis', 'global');
    const stored = await cluster.admin.get(example);
    assert.deepEqual(stored['spec'], example['spec']);
    // The schema is enforced: a misspelt value is refused, naming the field.
    await assert.rejects(
      cluster.admin.apply({
        ...example,
        spec: { ...(example['spec'] as object), storage: { type: 'redis2' } },
      }),
      (err: unknown) =>
        err instanceof KubeApiError && err.status === 422 && /spec\.storage\.type/.test(err.message),
    );
    assert.deepEqual((await cluster.admin.get(example))['spec'], example['spec']);
  });

  it("grants the controller's ServiceAccount every verb it uses", async () => {
    // A token for the ServiceAccount the manifests made (applying it again changes nothing).
    controller = await serviceAccountWithAccess(cluster, { namespace: 'portcullis', name: 'portcullis' });
    assert.equal(controller.username, 'system:serviceaccount:portcullis:portcullis');
    const refused = async (): Promise<string[]> => {
      const lines: string[] = [];
      for (const access of ALLOWED) if (!(await allowed(controller.client, access))) lines.push(text(access));
      return lines;
    };
    // RBAC reads bindings from a cache that lags their writes: wait (bounded) for all of them.
    await waitFor(async () => (await refused()).length === 0, {
      what: 'RBAC to grant the manifests',
      timeoutMs: 30_000,
      intervalMs: 200,
    }).catch(() => undefined);
    assert.deepEqual(await refused(), []);
  });

  it('refuses it what it does not use: Secrets beyond those named, deletes, writes to specs, other kinds', async () => {
    const granted: string[] = [];
    for (const access of DENIED) if (await allowed(controller.client, access)) granted.push(text(access));
    assert.deepEqual(granted, []);
  });

  it('grants exactly those rules: the API server reports nothing more in any namespace', async () => {
    // What every authenticated identity may do (self reviews, discovery), from a ServiceAccount with no grant.
    const nobody = await serviceAccountWithAccess(cluster, { namespace: 'portcullis', name: 'nobody' });
    for (const namespace of ['portcullis', 'shop', 'default', 'kube-system']) {
      const baseline = await ruleLines(nobody.client, namespace);
      const actual = [...(await ruleLines(controller.client, namespace))].filter(
        (line) => !baseline.has(line),
      );
      const expected = [...expectedLines(namespace)];
      assert.deepEqual(
        {
          extra: actual.filter((line) => !expected.includes(line)).sort(),
          missing: expected.filter((line) => !actual.includes(line)).sort(),
        },
        { extra: [], missing: [] },
        `rules in ${namespace}`,
      );
    }
  });

  it('lets real requests through only as narrowed: Secrets by name, the Lease, status but not spec', async () => {
    const client = controller.client;
    const admin = cluster.admin;
    await admin.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'portcullis', namespace: 'portcullis' },
      stringData: { shared_secret: 'made-by-the-test' },
    });
    const secrets = '/api/v1/namespaces/portcullis/secrets';
    // The watcher's list and watch, narrowed by a field selector to one name: RBAC checks resourceNames.
    const list = await client.request('GET', `${secrets}?fieldSelector=metadata.name%3Dportcullis`);
    assert.equal(list.status, 200);
    assert.equal((list.body as { items: unknown[] }).items.length, 1);
    const watch = await client.request(
      'GET',
      `${secrets}?watch=1&fieldSelector=metadata.name%3Dportcullis&timeoutSeconds=1`,
    );
    assert.equal(watch.status, 200);
    assert.equal((await client.request('GET', secrets)).status, 403, 'listing every Secret is refused');
    assert.equal((await client.request('GET', `${secrets}?fieldSelector=metadata.name%3Dother`)).status, 403);
    assert.equal((await client.request('GET', '/api/v1/secrets')).status, 403);

    // The Lease: created, read and renewed by name.
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'portcullis-status', namespace: 'portcullis' },
      spec: { holderIdentity: 'portcullis-0', leaseDurationSeconds: 15 },
    };
    const leases = '/apis/coordination.k8s.io/v1/namespaces/portcullis/leases';
    assert.equal((await client.request('POST', leases, lease)).status, 201);
    const read = await client.request('GET', `${leases}/portcullis-status`);
    assert.equal(read.status, 200);
    const renewed = { ...(read.body as object), spec: { ...lease.spec, holderIdentity: 'portcullis-1' } };
    assert.equal((await client.request('PUT', `${leases}/portcullis-status`, renewed)).status, 200);
    assert.equal((await client.request('DELETE', `${leases}/portcullis-status`)).status, 403);

    // The settings object: its status is written, its spec is not.
    const global = '/apis/portcullis.dev/v1alpha1/portcullises/global';
    const patch = (path: string, body: unknown) =>
      client.request('PATCH', path, body, 'application/merge-patch+json');
    assert.equal((await patch(`${global}/status`, { status: { observedGeneration: 1 } })).status, 200);
    assert.equal((await patch(global, { spec: { logLevel: 'debug' } })).status, 403);
    assert.equal((await client.request('GET', '/apis/networking.k8s.io/v1/ingresses')).status, 200);

    // The HTTPRoute CRD, watched by name while the Gateway API is missing; no other CRD.
    const crds = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
    const byName = `${crds}?fieldSelector=metadata.name%3Dhttproutes.gateway.networking.k8s.io`;
    assert.equal((await client.request('GET', byName)).status, 200);
    assert.equal((await client.request('GET', `${byName}&watch=1&timeoutSeconds=1`)).status, 200);
    assert.equal((await client.request('GET', crds)).status, 403, 'listing every CRD is refused');
    assert.equal(
      (await client.request('DELETE', '/apis/networking.k8s.io/v1/namespaces/shop/ingresses/shop')).status,
      403,
    );
  });
});

import { KUBE_API_AUDIENCE, type KubeCluster } from './kube-cluster.js';
import type { KubeClient } from './kube-client.js';
import { waitFor } from './wait.js';

/** One RBAC PolicyRule, as in a Role or ClusterRole. */
export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  readonly resourceNames?: readonly string[];
}

/** A service account with a token, and a client sending it. */
export interface ServiceAccountAccess {
  /** `system:serviceaccount:<namespace>:<name>`. */
  readonly username: string;
  readonly token: string;
  readonly client: KubeClient;
}

/**
 * Makes (server-side apply) the ServiceAccount `namespace/name` (and its Namespace), grants it
 * `rules` in its namespace (a Role and RoleBinding named after it) and `clusterRules` cluster-wide
 * (a ClusterRole and ClusterRoleBinding `<namespace>-<name>`), and asks the API server for a token
 * (TokenRequest, an hour, audience KUBE_API_AUDIENCE). It resolves once the authorizer allows the
 * first granted rule (a SubjectAccessReview; RBAC reads bindings from a cache that lags the write),
 * so a test can assert on both what is allowed and what is refused right away.
 */
export async function serviceAccountWithAccess(
  cluster: KubeCluster,
  options: {
    namespace: string;
    name: string;
    rules?: readonly PolicyRule[];
    clusterRules?: readonly PolicyRule[];
  },
): Promise<ServiceAccountAccess> {
  const { namespace, name } = options;
  const admin = cluster.admin;
  const rbac = 'rbac.authorization.k8s.io/v1';
  const subject = { kind: 'ServiceAccount', name, namespace };
  await admin.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  await admin.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } });
  if (options.rules !== undefined) {
    await admin.apply({
      apiVersion: rbac,
      kind: 'Role',
      metadata: { name, namespace },
      rules: options.rules,
    });
    await admin.apply({
      apiVersion: rbac,
      kind: 'RoleBinding',
      metadata: { name, namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [subject],
    });
  }
  if (options.clusterRules !== undefined) {
    const clusterName = `${namespace}-${name}`;
    await admin.apply({
      apiVersion: rbac,
      kind: 'ClusterRole',
      metadata: { name: clusterName },
      rules: options.clusterRules,
    });
    await admin.apply({
      apiVersion: rbac,
      kind: 'ClusterRoleBinding',
      metadata: { name: clusterName },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterName },
      subjects: [subject],
    });
  }
  const tokenPath = `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(name)}/token`;
  const answer = await admin.request('POST', tokenPath, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { audiences: [KUBE_API_AUDIENCE], expirationSeconds: 3600 },
  });
  const token = (answer.body as { status?: { token?: string } } | undefined)?.status?.token;
  if (answer.status !== 201 || token === undefined) {
    throw new Error(`TokenRequest for ${namespace}/${name}: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
  const username = `system:serviceaccount:${namespace}:${name}`;
  const first = options.rules?.[0] ?? options.clusterRules?.[0];
  if (first !== undefined)
    await waitUntilAllowed(admin, username, first, options.rules?.[0] === undefined ? undefined : namespace);
  return { username, token, client: cluster.clientFor(token) };
}

/** Waits (bounded) until a SubjectAccessReview says `username` may do the rule's first verb on its first resource. */
async function waitUntilAllowed(
  admin: KubeClient,
  username: string,
  rule: PolicyRule,
  namespace: string | undefined,
): Promise<void> {
  const review = {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      user: username,
      groups: [
        'system:serviceaccounts',
        `system:serviceaccounts:${username.split(':')[2] ?? ''}`,
        'system:authenticated',
      ],
      resourceAttributes: {
        group: rule.apiGroups[0] ?? '',
        resource: rule.resources[0] ?? '',
        verb: rule.verbs[0] ?? '',
        ...(namespace === undefined ? {} : { namespace }),
        ...(rule.resourceNames?.[0] === undefined ? {} : { name: rule.resourceNames[0] }),
      },
    },
  };
  await waitFor(
    async () => {
      const answer = await admin.request(
        'POST',
        '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        review,
      );
      return (answer.body as { status?: { allowed?: boolean } } | undefined)?.status?.allowed === true;
    },
    {
      what: `RBAC to allow ${username} to ${JSON.stringify(review.spec.resourceAttributes)}`,
      timeoutMs: 30_000,
      intervalMs: 100,
    },
  );
}

import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { PortcullisError } from '../../shared/errors.js';
import { SETTINGS_GROUP, SETTINGS_PLURAL, SETTINGS_VERSION } from '../crd-schema.js';
import { SETTINGS_CRD_NAME } from '../cluster-state.js';
import { apiStatusCode, describeKubeError } from './kube-errors.js';

/** Where a pod finds its own namespace (the service account mount). */
const POD_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/**
 * The cluster connection: `kubeconfig` when given, else the pod's service account when running in
 * a cluster (KUBERNETES_SERVICE_HOST), else KUBECONFIG or ~/.kube/config (client-node's default
 * order). Throws KUBE_CONFIG_INVALID when none names a cluster.
 */
export function loadKubeConfig(
  kubeconfig: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): KubeConfig {
  const config = new KubeConfig();
  try {
    if (kubeconfig !== undefined) config.loadFromFile(kubeconfig);
    else if (env.KUBERNETES_SERVICE_HOST !== undefined && env.KUBECONFIG === undefined)
      config.loadFromCluster();
    else config.loadFromDefault();
  } catch (err) {
    throw new PortcullisError(
      'KUBE_CONFIG_INVALID',
      `cannot load the cluster connection${kubeconfig === undefined ? '' : ` from ${kubeconfig}`}: ${describeKubeError(err)}`,
    );
  }
  if (config.getCurrentCluster() === null) {
    throw new PortcullisError(
      'KUBE_CONFIG_INVALID',
      'no Kubernetes cluster configured: run in a pod (service account), or pass --kubeconfig <file> (or set KUBECONFIG)',
    );
  }
  return config;
}

/** `--namespace`, else the pod's own namespace, else `default`. */
export function ownNamespace(given: string | undefined): string {
  if (given !== undefined && given !== '') return given;
  try {
    const text = readFileSync(POD_NAMESPACE_FILE, 'utf8').trim();
    if (text !== '') return text;
  } catch {
    // Not in a pod: the default below.
  }
  return 'default';
}

/** This replica's name for the Lease: the pod name (POD_NAME, HOSTNAME in a pod), else host and pid. */
export function replicaIdentity(env: Readonly<Record<string, string | undefined>>): string {
  const pod = env.POD_NAME ?? (env.KUBERNETES_SERVICE_HOST === undefined ? undefined : env.HOSTNAME);
  return pod !== undefined && pod !== '' ? pod : `${hostname()}-${process.pid}`;
}

/**
 * Checks at start that the API server answers and serves the settings resource, so a wrong
 * cluster or a missing CRD is one clear error naming the fix rather than a watch retrying forever.
 */
export async function checkSettingsApi(config: KubeConfig): Promise<void> {
  const server = config.getCurrentCluster()?.server ?? '(none)';
  try {
    await config.makeApiClient(CustomObjectsApi).listClusterCustomObject({
      group: SETTINGS_GROUP,
      version: SETTINGS_VERSION,
      plural: SETTINGS_PLURAL,
      limit: 1,
    });
  } catch (err) {
    const status = apiStatusCode(err);
    if (status === 404) {
      throw new PortcullisError(
        'KUBE_CRD_MISSING',
        `the API server at ${server} does not serve ${SETTINGS_GROUP}/${SETTINGS_VERSION} ${SETTINGS_PLURAL}: the CustomResourceDefinition ${SETTINGS_CRD_NAME} is not installed; apply it with \`kubectl apply -f deploy/kubernetes/crd.yaml\``,
      );
    }
    throw new PortcullisError(
      'KUBE_API_UNREACHABLE',
      `cannot use the Kubernetes API server at ${server}: ${describeKubeError(err)}${status === 401 || status === 403 ? ' (check the credentials and RBAC: Portcullis lists and watches portcullises.portcullis.dev)' : ''}`,
    );
  }
}

/**
 * Objects the live route tests apply (namespace `default`): valid settings with their Secrets, the
 * Service `web` and its EndpointSlices, an IngressClass and Ingresses routing to `web`, and a lookup
 * of Portcullis's Events about an object.
 */
import { randomBytes } from 'node:crypto';
import { CRD_PATH } from '../../src/kubernetes/crd-file.js';
import type { KubeClient, KubeObject, KubeRef } from './kube-client.js';
import { applyCrds, readYamlObjects } from './kube-crds.js';
import { waitFor } from './wait.js';

/** The namespace the route tests use. */
export const NS = 'default';
/** A value of the IdP client secret the tests check never leaks into Events. */
export const IDP_CLIENT_SECRET = `idp-secret-${randomBytes(8).toString('hex')}`;

function secret(name: string, data: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: NS },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  };
}

/**
 * The settings CRD and a valid `global` object (insecure server) with its Secrets. By default the
 * IdP is unreachable (routes that need no sign-in); a sign-in test gives a running IdP, its client
 * and an authenticate URL on the listener's port. `spec` fields override the defaults
 * (`{ insecureServer: false }` serves TLS with the routes' certificates).
 */
export async function applySettings(
  client: KubeClient,
  signIn: { idpUrl: string; clientId: string; clientSecret: string; authenticateUrl: string } = {
    idpUrl: 'http://127.0.0.1:9/',
    clientId: 'portcullis',
    clientSecret: IDP_CLIENT_SECRET,
    authenticateUrl: 'https://authenticate.example.com',
  },
  spec: Readonly<Record<string, unknown>> = {},
): Promise<void> {
  await applyCrds(client, readYamlObjects(CRD_PATH));
  await client.apply(
    secret('core', {
      shared_secret: randomBytes(32).toString('base64'),
      cookie_secret: randomBytes(32).toString('base64'),
    }),
  );
  await client.apply(secret('idp', { client_id: signIn.clientId, client_secret: signIn.clientSecret }));
  await client.apply({
    apiVersion: 'portcullis.dev/v1alpha1',
    kind: 'Portcullis',
    metadata: { name: 'global' },
    spec: {
      insecureServer: true,
      authenticate: { url: signIn.authenticateUrl },
      identityProvider: { url: signIn.idpUrl, secret: { name: 'idp' } },
      secrets: { name: 'core' },
      ...spec,
    },
  });
}

/** Service `web` with one port named `http`. */
export function webService(targetPort: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: NS },
    spec: { ports: [{ name: 'http', port: 80, targetPort }] },
  };
}

/** An EndpointSlice `name` of Service `web`: ready `addresses` on `port` (named `http`). */
export function endpointSlice(name: string, port: number, addresses: readonly string[]): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name,
      namespace: NS,
      labels: { 'kubernetes.io/service-name': 'web' },
    } as KubeRef['metadata'],
    addressType: 'IPv4',
    ports: [{ name: 'http', port, protocol: 'TCP' }],
    endpoints: addresses.map((address) => ({ addresses: [address], conditions: { ready: true } })),
  };
}

/** An IngressClass `name` whose controller is `controller`. */
export function ingressClass(name: string, controller: string): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'IngressClass',
    metadata: { name },
    spec: { controller },
  };
}

/** A reference to Ingress `name` in NS (to get, wait for or delete it). */
export function ingressRef(name: string): KubeRef {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, namespace: NS } };
}

/** Ingress `name` of class `className`: every path of `host` to Service `web`, port `http`. */
export function ingress(
  name: string,
  host: string,
  annotations: Record<string, string>,
  className = 'portcullis',
): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace: NS, annotations } as KubeRef['metadata'],
    spec: {
      ingressClassName: className,
      rules: [
        {
          host,
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: 'web', port: { name: 'http' } } },
              },
            ],
          },
        },
      ],
    },
  };
}

/** Waits (20 s) for an Event with `reason` about `kind` `name` in NS, and returns it. */
export function waitForEvent(
  client: KubeClient,
  kind: string,
  name: string,
  reason: string,
): Promise<KubeObject> {
  return waitFor(
    async () => {
      const events = await client.list({ apiVersion: 'v1', kind: 'Event', namespace: NS });
      return events.find((event) => {
        const about = event['involvedObject'] as { kind?: string; name?: string };
        return about.kind === kind && about.name === name && event['reason'] === reason;
      });
    },
    { what: `a ${reason} Event on ${kind} ${name}`, timeoutMs: 20_000 },
  );
}

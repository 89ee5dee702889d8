// Realistic Kubernetes objects for the route source tests, shaped as the API server returns them
// (plain JSON), with builders for the parts tests vary.
import { generateTestCertificate } from '../../support/test-certs.js';
import { INGRESS_CONTROLLER } from '../../../src/kubernetes/ingress-routes.js';
import { GATEWAY_CONTROLLER } from '../../../src/kubernetes/gateway-listeners.js';
import type {
  EndpointSlice,
  Gateway,
  GatewayClass,
  HTTPIngressPath,
  HTTPRoute,
  Ingress,
  IngressClass,
  Secret,
  Service,
  ServicePort,
} from '../../../src/kubernetes/objects.js';
import type { RouteSourceInput } from '../../../src/kubernetes/route-source.js';

/** Our IngressClass `portcullis`, optionally the default class. */
export function ourClass(isDefault = false): IngressClass {
  return {
    metadata: {
      name: 'portcullis',
      ...(isDefault ? { annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } } : {}),
    },
    spec: { controller: INGRESS_CONTROLLER },
  };
}

/** Another controller's IngressClass `nginx`. */
export const NGINX_CLASS: IngressClass = {
  metadata: { name: 'nginx' },
  spec: { controller: 'k8s.io/ingress-nginx' },
};

/** An Ingress of class `portcullis` in namespace `shop`, one host, the paths given. */
export function ingress(
  name: string,
  paths: readonly HTTPIngressPath[],
  extra: {
    readonly host?: string;
    readonly annotations?: Record<string, string>;
    readonly created?: string;
    readonly className?: string | null;
    readonly tls?: readonly { hosts?: string[]; secretName?: string }[];
  } = {},
): Ingress {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name,
      namespace: 'shop',
      uid: `uid-${name}`,
      generation: 1,
      resourceVersion: '100',
      creationTimestamp: extra.created ?? '2026-01-01T00:00:00Z',
      ...(extra.annotations === undefined ? {} : { annotations: extra.annotations }),
    },
    spec: {
      ...(extra.className === null ? {} : { ingressClassName: extra.className ?? 'portcullis' }),
      rules: [{ host: extra.host ?? 'shop.example.com', http: { paths } }],
      ...(extra.tls === undefined ? {} : { tls: extra.tls }),
    },
  };
}

/** A path to Service `service` port `port` (a number, or a port name). */
export function path(
  value: string,
  pathType: HTTPIngressPath['pathType'],
  service = 'web',
  port: number | string = 80,
): HTTPIngressPath {
  return {
    path: value,
    pathType,
    backend: {
      service: { name: service, port: typeof port === 'number' ? { number: port } : { name: port } },
    },
  };
}

/** A Service in `shop` with `ports` (default one port 80 named http to the container port named http). */
export function service(
  name: string,
  ports: readonly ServicePort[] = [{ name: 'http', port: 80, targetPort: 'http' }],
): Service {
  return { metadata: { name, namespace: 'shop' }, spec: { type: 'ClusterIP', ports } };
}

/** An EndpointSlice of Service `name` in `shop`: `addresses` with their ready flag, the port by name. */
export function slice(
  name: string,
  addresses: readonly (readonly [string, boolean])[],
  port: { readonly name?: string; readonly port: number } = { name: 'http', port: 8080 },
  addressType: EndpointSlice['addressType'] = 'IPv4',
): EndpointSlice {
  return {
    metadata: {
      name: `${name}-${addresses.length}-${port.port}`,
      namespace: 'shop',
      labels: { 'kubernetes.io/service-name': name },
    },
    addressType,
    ports: [{ ...port, protocol: 'TCP' }],
    endpoints: addresses.map(([address, ready]) => ({ addresses: [address], conditions: { ready } })),
  };
}

/** A kubernetes.io/tls Secret holding a certificate made for this test run. */
export function tlsSecret(name: string, host = 'shop.example.com'): Secret {
  const made = generateTestCertificate(host);
  return {
    metadata: { name, namespace: 'shop' },
    type: 'kubernetes.io/tls',
    data: {
      'tls.crt': Buffer.from(made.certPem).toString('base64'),
      'tls.key': Buffer.from(made.keyPem).toString('base64'),
    },
  };
}

/** Our GatewayClass `portcullis`. */
export const OUR_GATEWAY_CLASS: GatewayClass = {
  metadata: { name: 'portcullis' },
  spec: { controllerName: GATEWAY_CONTROLLER },
};

/** A Gateway `edge` in `shop` of class `portcullis` with an HTTPS listener for `*.example.com`. */
export function gateway(listeners: Gateway['spec']['listeners'] = [httpsListener()]): Gateway {
  return {
    metadata: { name: 'edge', namespace: 'shop' },
    spec: { gatewayClassName: 'portcullis', listeners },
  };
}

/** An HTTPS listener `https` on 443 terminating with Secret `edge-tls`. */
export function httpsListener(hostname = '*.example.com'): Gateway['spec']['listeners'][number] {
  return {
    name: 'https',
    port: 443,
    protocol: 'HTTPS',
    hostname,
    tls: { mode: 'Terminate', certificateRefs: [{ kind: 'Secret', name: 'edge-tls' }] },
  };
}

/** An HTTPRoute in `shop` attached to Gateway `edge`. */
export function httpRoute(
  name: string,
  spec: HTTPRoute['spec'],
  annotations?: Record<string, string>,
): HTTPRoute {
  return {
    metadata: {
      name,
      namespace: 'shop',
      creationTimestamp: '2026-02-01T00:00:00Z',
      ...(annotations === undefined ? {} : { annotations }),
    },
    spec: { parentRefs: [{ name: 'edge' }], ...spec },
  };
}

/**
 * A route source input with our classes, Service `web` and its endpoints, and `secrets` to read;
 * tests spread what they need over it.
 */
export function input(
  extra: Partial<RouteSourceInput> = {},
  secrets: readonly Secret[] = [],
): RouteSourceInput {
  return {
    ingressClasses: [ourClass(), NGINX_CLASS],
    ingresses: [],
    gatewayClasses: [OUR_GATEWAY_CLASS],
    gateways: [],
    httpRoutes: [],
    services: [service('web')],
    endpointSlices: [
      slice('web', [
        ['10.1.0.5', true],
        ['10.1.0.6', true],
      ]),
    ],
    secrets: (wanted) => {
      const found = secrets.find(
        (secret) => secret.metadata.namespace === wanted.namespace && secret.metadata.name === wanted.name,
      );
      // What the watcher hands over: the data decoded from the API's base64.
      return found === undefined
        ? undefined
        : Object.fromEntries(
            Object.entries(found.data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')]),
          );
    },
    ...extra,
  };
}

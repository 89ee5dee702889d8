/**
 * Service backends -> route destinations: a Service port (by number or name) followed through the
 * Service's EndpointSlices to the ready endpoint addresses and the port each slice resolved the
 * target port to (named target ports are resolved per pod by Kubernetes, in the slice). The
 * destinations are IP literals, which translate compiles to an EDS cluster named by the route's
 * identity, so a scale-up or a rolling restart changes endpoints over EDS only.
 */
import { isIP } from 'node:net';
import {
  SERVICE_NAME_LABEL,
  type EndpointSlice,
  type Service,
  type ServiceBackendPort,
  type ServicePort,
} from './objects.js';

/** Services and their EndpointSlices, indexed by `namespace/name` once per build. */
export interface ServiceIndex {
  readonly services: ReadonlyMap<string, Service>;
  readonly slices: ReadonlyMap<string, readonly EndpointSlice[]>;
}

/** Indexes `services` and `slices` (by their kubernetes.io/service-name label) for one build. */
export function indexServices(services: readonly Service[], slices: readonly EndpointSlice[]): ServiceIndex {
  const byService = new Map<string, EndpointSlice[]>();
  for (const slice of slices) {
    const service = slice.metadata.labels?.[SERVICE_NAME_LABEL];
    if (service === undefined) continue;
    const key = `${slice.metadata.namespace ?? ''}/${service}`;
    const list = byService.get(key);
    if (list === undefined) byService.set(key, [slice]);
    else list.push(slice);
  }
  return {
    services: new Map(
      services.map((service) => [`${service.metadata.namespace ?? ''}/${service.metadata.name}`, service]),
    ),
    slices: byService,
  };
}

/** What a Service backend resolves to. */
export type BackendResolution =
  | {
      readonly kind: 'endpoints';
      /** Destination URLs (`http://10.0.0.7:8080`), sorted, one per ready address; none while none is ready. */
      readonly urls: readonly string[];
    }
  | { readonly kind: 'problem'; readonly message: string };

/**
 * Resolves Service `namespace/name` port `port` to its ready endpoints. An unknown Service or port
 * is a problem naming it; a Service with no ready endpoint has no URLs (its route answers 503
 * until one is ready). Endpoints whose ready condition is unset count as ready (the API's rule);
 * terminating ones are left out by it.
 */
export function resolveServiceBackend(
  index: ServiceIndex,
  namespace: string,
  name: string,
  port: ServiceBackendPort | undefined,
): BackendResolution {
  const service = index.services.get(`${namespace}/${name}`);
  if (service === undefined)
    return { kind: 'problem', message: `Service ${namespace}/${name} does not exist` };
  if (service.spec?.type === 'ExternalName')
    return {
      kind: 'problem',
      message: `Service ${namespace}/${name} is of type ExternalName, which has no EndpointSlices; point the backend at a Service with a selector or EndpointSlices`,
    };
  const servicePort = findPort(service.spec?.ports ?? [], port);
  if (typeof servicePort === 'string')
    return { kind: 'problem', message: `Service ${namespace}/${name}: ${servicePort}` };
  const scheme = schemeOf(servicePort);
  const urls = new Set<string>();
  for (const slice of index.slices.get(`${namespace}/${name}`) ?? []) {
    if (slice.addressType === 'FQDN') continue;
    const slicePort = (slice.ports ?? []).find(
      (candidate) => (candidate.name ?? '') === (servicePort.name ?? ''),
    );
    if (slicePort?.port === undefined) continue;
    for (const endpoint of slice.endpoints ?? []) {
      if (endpoint.conditions?.ready === false) continue;
      for (const address of endpoint.addresses) {
        const family = isIP(address);
        if (family === 0) continue;
        urls.add(`${scheme}://${family === 6 ? `[${address}]` : address}:${slicePort.port}`);
      }
    }
  }
  return { kind: 'endpoints', urls: [...urls].sort() };
}

/** The Service port a backend names (by number, or by name), or why there is none. */
function findPort(
  ports: readonly ServicePort[],
  wanted: ServiceBackendPort | undefined,
): ServicePort | string {
  if (wanted?.number !== undefined) {
    const found = ports.find((port) => port.port === wanted.number);
    return found ?? `has no port ${wanted.number} (it has ${listPorts(ports)})`;
  }
  if (wanted?.name !== undefined) {
    const found = ports.find((port) => port.name === wanted.name);
    return found ?? `has no port named ${JSON.stringify(wanted.name)} (it has ${listPorts(ports)})`;
  }
  const only = ports.length === 1 ? ports[0] : undefined;
  return only ?? `the backend must name a port: the Service has ${listPorts(ports)}`;
}

function listPorts(ports: readonly ServicePort[]): string {
  if (ports.length === 0) return 'no ports';
  return ports
    .map((port) => (port.name === undefined ? String(port.port) : `${port.port} (${port.name})`))
    .join(', ');
}

/**
 * The destination scheme from the port's appProtocol (the Kubernetes field for it): `https` and
 * `kubernetes.io/h2c` as their names say, plain HTTP/1.1 otherwise.
 */
function schemeOf(port: ServicePort): 'http' | 'https' | 'h2c' {
  const protocol = port.appProtocol?.toLowerCase();
  if (protocol === 'https' || protocol === 'kubernetes.io/https') return 'https';
  if (protocol === 'kubernetes.io/h2c' || protocol === 'h2c') return 'h2c';
  return 'http';
}

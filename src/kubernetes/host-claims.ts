/**
 * The hosts each live Ingress and HTTPRoute claims (pure), read from the objects as listed, before
 * any is replaced by its last accepted version or left out (last-accepted.ts): host ownership
 * (host-owners.ts) must see an owner's claim even while its object is refused, or a namespace
 * whose Service is briefly missing would hand its host to whoever else claims it.
 *
 * The hosts are those the route source gives candidates for: an Ingress of our class claims each
 * rule's host (`*` for a rule without one, and for `spec.defaultBackend`); an HTTPRoute claims its
 * hostnames (every host, `*`, when none) intersected with the hostname of each listener of our
 * Gateways it attaches to, for its OWN namespace: whom a listener lets attach is the Gateway
 * owner's decision on attachment only, never a share of another namespace's host.
 */
import { gatewayListeners, type OpenListener } from './gateway-listeners.js';
import { readAllowedNamespaces } from './host-ownership.js';
import {
  decideHostOwners,
  heldHostOwners,
  recordedHostOwners,
  type HostClaim,
  type RecordedOwner,
} from './host-owners.js';
import { hostProblem, intersectHosts } from './hosts.js';
import { classFilter } from './ingress-routes.js';
import type { HTTPRoute, Ingress } from './objects.js';
import { refOf, type ObjectRef } from './object-problems.js';
import { rankOf } from './route-assembly.js';
import type { RouteSourceInput } from './route-source.js';
import { newCertificateSet } from './tls-secrets.js';

/** The objects claims are read from: the route source's own lists of them. */
export type ClaimSources = Pick<
  RouteSourceInput,
  'ingressClasses' | 'ingresses' | 'gatewayClasses' | 'gateways' | 'httpRoutes'
>;

/** Every host claim of the live objects (see the module comment); a bad host claims nothing. */
export function liveHostClaims(sources: ClaimSources): HostClaim[] {
  const claims: HostClaim[] = [];
  const isOurs = classFilter(sources.ingressClasses);
  for (const ingress of sources.ingresses) {
    if (!isOurs(ingress)) continue;
    const hosts = new Set<string>();
    for (const rule of ingress.spec?.rules ?? []) {
      const host = (rule.host ?? '*').toLowerCase();
      if (rule.host === undefined || hostProblem(host) === undefined) hosts.add(host);
    }
    if (ingress.spec?.defaultBackend !== undefined) hosts.add('*');
    claims.push(...claimsOf(refOf('Ingress', ingress.metadata), ingress.metadata, hosts));
  }
  // Only which listeners are open counts here: their certificates are the route source's concern.
  const listeners = gatewayListeners(
    sources.gatewayClasses,
    sources.gateways,
    () => undefined,
    newCertificateSet(),
  ).gateways;
  for (const route of sources.httpRoutes)
    claims.push(
      ...claimsOf(refOf('HTTPRoute', route.metadata), route.metadata, routeHosts(route, listeners)),
    );
  return claims;
}

/** The claims of one object on `hosts`. */
function claimsOf(object: ObjectRef, metadata: Ingress['metadata'], hosts: ReadonlySet<string>): HostClaim[] {
  const sharesWith = readAllowedNamespaces(object, metadata.annotations).namespaces;
  const namespace = metadata.namespace ?? 'default';
  const rank = rankOf(object, metadata.creationTimestamp, 0);
  return [...hosts].map((host) => ({ host, namespace, object, rank, sharesWith }));
}

/**
 * The hosts `route` gets through the listeners it attaches to, read as httproute-routes.ts reads
 * attachment (parentRef, sectionName, port, allowedRoutes).
 */
function routeHosts(route: HTTPRoute, gateways: ReadonlyMap<string, readonly OpenListener[]>): Set<string> {
  const namespace = route.metadata.namespace ?? 'default';
  const hosts = new Set<string>();
  for (const parent of route.spec.parentRefs ?? []) {
    if ((parent.group ?? 'gateway.networking.k8s.io') !== 'gateway.networking.k8s.io') continue;
    if ((parent.kind ?? 'Gateway') !== 'Gateway') continue;
    for (const listener of gateways.get(`${parent.namespace ?? namespace}/${parent.name}`) ?? []) {
      const attaches =
        (parent.sectionName === undefined || parent.sectionName === listener.name) &&
        (parent.port === undefined || parent.port === listener.port) &&
        listener.allowsHttpRoute &&
        (listener.from === 'All' || listener.gateway.namespace === namespace);
      if (!attaches) continue;
      for (const name of route.spec.hostnames ?? ['*']) {
        const host = intersectHosts(listener.hostname, name.toLowerCase());
        if (host !== undefined && (host === '*' || hostProblem(host) === undefined)) hosts.add(host);
      }
    }
  }
  return hosts;
}

/**
 * The owners the next build serves by and the Lease holder records: the record in the settings
 * object's `status` (unknown data from the API server) carried forward over the live objects'
 * claims (host-owners.ts), each host its owner holds itself.
 */
export function nextHostOwners(status: unknown, sources: ClaimSources): Map<string, RecordedOwner> {
  return heldHostOwners(decideHostOwners(recordedHostOwners(status), liveHostClaims(sources)));
}

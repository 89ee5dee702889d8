/**
 * Host ownership (pure): one namespace may not add paths on another namespace's host. Without it,
 * anyone who may create an Ingress in namespace `team-b` could put `/login` on `app.example.com`,
 * a host team-a serves: a page of theirs on a host users trust, receiving team-a's host cookies.
 * Portcullis fails closed, deliberately, so two namespaces sharing a host is an opt-in.
 *
 * - Owner: a host (exact, `*.` wildcard or `*` for every host, compared as written in lower case,
 *   so `*.example.com` and `app.example.com` are two hosts) belongs to the namespace of the OLDEST
 *   object among the Ingresses and HTTPRoutes claiming it (creation time, then `namespace/name`:
 *   the rank route-assembly.ts resolves path conflicts with). Deleting it hands the host to the
 *   next oldest.
 * - Gateways: whom a Gateway listener lets attach (`allowedRoutes.namespaces`) is its owner's
 *   decision, so an HTTPRoute claims a host for the namespace of the Gateway whose listener gave it
 *   that host (its own namespace first when one of its own Gateways did): with `from: All` on a
 *   team-a Gateway, team-b's HTTPRoutes count as team-a's there. The Gateway's age does not count.
 * - Sharing: `portcullis.dev/allowed_namespaces` (names separated by commas, or `*`) on an Ingress
 *   or HTTPRoute of the owner namespace lets those namespaces add paths on the hosts that object
 *   claims.
 * - Others: their paths on the host are left out (`skipped`, reported on the object as a
 *   RouteRefused Event and in its status), one message per object and host naming the owner and
 *   how to share; every other object and host is served as before.
 * - Certificates: a listener certificate from a namespace that names (as an exact SAN string) a
 *   host owned by another namespace that does not share it is left out too: Envoy prefers an exact
 *   name, so team-b's certificate for `app.example.com` would otherwise win over team-a's wildcard.
 *   A wildcard certificate from another namespace is still served for a host the owner has no
 *   certificate of its own for (Envoy's choice; nothing of the owner's is displaced).
 */
import { ANNOTATION_PREFIX } from './annotations.js';
import { intersectHosts } from './hosts.js';
import type { OpenListener } from './gateway-listeners.js';
import type { HTTPRoute } from './objects.js';
import { annotationWhere, describeObject, type ObjectProblem, type ObjectRef } from './object-problems.js';
import type { RouteCandidate } from './route-assembly.js';
import type { CertificateOrigin } from './route-provenance.js';
import { readCertificateNames, type CertificateNamesOf } from './tls-secrets.js';

/** The owner's opt-in to share its hosts (a controller annotation, see annotations.ts). */
export const ALLOWED_NAMESPACES_ANNOTATION = `${ANNOTATION_PREFIX}allowed_namespaces`;

/** A namespace name (an RFC 1123 label, as the API server checks it). */
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Who owns a host and whom it shares it with. */
export interface HostOwner {
  readonly namespace: string;
  /** The oldest object claiming the host. */
  readonly object: ObjectRef;
  /** Namespaces the owner's `allowed_namespaces` annotations name on this host (`*`: every one). */
  readonly sharedWith: ReadonlySet<string>;
}

/** The candidates ownership keeps, the claims it left out, and each host's owner. */
export interface ClaimedHosts {
  readonly kept: readonly RouteCandidate[];
  readonly skipped: readonly ObjectProblem[];
  readonly owners: ReadonlyMap<string, HostOwner>;
}

/**
 * The namespaces `portcullis.dev/allowed_namespaces` on `object` names (none when absent), or a
 * problem naming the annotation: each item must be a namespace name or `*`, so a typo shares with
 * nobody rather than with a namespace no one meant.
 */
export function readAllowedNamespaces(
  object: ObjectRef,
  annotations: Readonly<Record<string, string>> | undefined,
): { readonly namespaces: readonly string[]; readonly problems: readonly ObjectProblem[] } {
  const text = annotations?.[ALLOWED_NAMESPACES_ANNOTATION];
  if (text === undefined) return { namespaces: [], problems: [] };
  const items = text.split(',').map((item) => item.trim());
  const bad = items.filter((item) => item !== '*' && !NAMESPACE.test(item));
  if (bad.length === 0) return { namespaces: items, problems: [] };
  return {
    namespaces: [],
    problems: [
      {
        object,
        where: annotationWhere(ALLOWED_NAMESPACES_ANNOTATION),
        message: `expected namespace names separated by commas, or "*"; ${bad.map((item) => JSON.stringify(item)).join(', ')} ${bad.length === 1 ? 'is not one' : 'are not'}`,
      },
    ],
  };
}

/**
 * `candidates` of HTTPRoutes with the namespaces each claims its host for (`tenants`: the
 * namespaces of the Gateways whose listeners gave the route that host, see the module comment) and
 * their `allowed_namespaces`; the annotation's problems. Attachment is read as
 * httproute-routes.ts reads it (parentRef, sectionName, port, allowedRoutes).
 */
export function withGatewayTenants(
  candidates: readonly RouteCandidate[],
  httpRoutes: readonly HTTPRoute[],
  gateways: ReadonlyMap<string, readonly OpenListener[]>,
): { readonly candidates: readonly RouteCandidate[]; readonly problems: readonly ObjectProblem[] } {
  const byName = new Map(httpRoutes.map((route) => [objectKey(route.metadata), route]));
  const tenantsOf = new Map<string, ReadonlyMap<string, readonly string[]>>();
  const sharesOf = new Map<string, readonly string[]>();
  const problems: ObjectProblem[] = [];
  const annotated = candidates.map((candidate) => {
    const key = objectKey(candidate.origin.object);
    const route = byName.get(key);
    if (route === undefined) return candidate;
    if (!tenantsOf.has(key)) {
      tenantsOf.set(key, routeTenants(route, gateways));
      const read = readAllowedNamespaces(candidate.origin.object, route.metadata.annotations);
      sharesOf.set(key, read.namespaces);
      problems.push(...read.problems);
    }
    const tenants = tenantsOf.get(key)?.get(candidate.host);
    const shares = sharesOf.get(key) ?? [];
    return {
      ...candidate,
      ...(tenants === undefined ? {} : { tenants }),
      ...(shares.length === 0 ? {} : { sharesHostWith: shares }),
    };
  });
  return { candidates: annotated, problems };
}

/** Host -> the namespaces of the Gateways through which `route` claims it, its own first. */
function routeTenants(
  route: HTTPRoute,
  gateways: ReadonlyMap<string, readonly OpenListener[]>,
): ReadonlyMap<string, readonly string[]> {
  const namespace = route.metadata.namespace ?? 'default';
  const hosts = new Map<string, Set<string>>();
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
        if (host === undefined) continue;
        const tenants = hosts.get(host) ?? new Set<string>();
        tenants.add(listener.gateway.namespace ?? namespace);
        hosts.set(host, tenants);
      }
    }
  }
  return new Map(
    [...hosts].map(([host, tenants]) => [
      host,
      [...tenants].sort((a, b) => Number(b === namespace) - Number(a === namespace) || (a < b ? -1 : 1)),
    ]),
  );
}

/** The namespaces a candidate claims its host for: `tenants`, else its object's namespace. */
function tenantsOf(candidate: RouteCandidate): readonly string[] {
  return candidate.tenants ?? [candidate.origin.object.namespace ?? ''];
}

/** Whether `owner` lets a claim for `tenants` serve on its host. */
export function mayServe(owner: HostOwner, tenants: readonly string[]): boolean {
  return (
    owner.sharedWith.has('*') ||
    tenants.some((tenant) => tenant === owner.namespace || owner.sharedWith.has(tenant))
  );
}

/** Decides each host's owner and leaves out the other namespaces' claims (see the module comment). */
export function claimHosts(candidates: readonly RouteCandidate[]): ClaimedHosts {
  const byHost = new Map<string, RouteCandidate[]>();
  for (const candidate of candidates) {
    const list = byHost.get(candidate.host) ?? [];
    list.push(candidate);
    byHost.set(candidate.host, list);
  }
  const owners = new Map<string, HostOwner>();
  const kept: RouteCandidate[] = [];
  const skipped = new Map<string, ObjectProblem>();
  for (const [host, claims] of byHost) {
    const oldest = claims.reduce((a, b) => (olderObject(b, a) ? b : a));
    const namespace = tenantsOf(oldest)[0] ?? '';
    const sharedWith = new Set(
      claims
        .filter((claim) => claim.origin.object.namespace === namespace)
        .flatMap((claim) => claim.sharesHostWith ?? []),
    );
    const owner: HostOwner = { namespace, object: oldest.origin.object, sharedWith };
    owners.set(host, owner);
    for (const claim of claims) {
      if (mayServe(owner, tenantsOf(claim))) {
        kept.push(claim);
        continue;
      }
      const key = `${claim.origin.object.kind}\u0000${objectKey(claim.origin.object)}\u0000${host}`;
      if (!skipped.has(key))
        skipped.set(key, {
          object: claim.origin.object,
          where: claim.origin.keys.from ?? claim.origin.where,
          message: `${ownedMessage(host, owner)}; this object's paths on it are left out. ${shareHint(host, owner, tenantsOf(claim)[0] ?? '')}`,
        });
    }
  }
  return { kept, skipped: [...skipped.values()], owners };
}

/** Listener certificates with their origins (same index), as route-source.ts hands them on. */
export interface OwnedCertificates {
  readonly certificates: readonly { readonly cert: string; readonly key: string }[];
  readonly origins: readonly CertificateOrigin[];
}

/**
 * The listener certificates a namespace may serve: one naming a host owned by another namespace
 * that does not share it with the certificate's namespace is left out and reported on the object
 * that referenced its Secret (see the module comment).
 */
export function ownedCertificates(
  set: OwnedCertificates,
  owners: ReadonlyMap<string, HostOwner>,
  certificateNames: CertificateNamesOf = readCertificateNames,
): OwnedCertificates & { readonly skipped: readonly ObjectProblem[] } {
  const certificates: { readonly cert: string; readonly key: string }[] = [];
  const origins: CertificateOrigin[] = [];
  const skipped: ObjectProblem[] = [];
  // Whether any owned host is closed to a namespace: when none is, its certificates need no reading.
  const closed = new Map<string, boolean>();
  const closedTo = (namespace: string): boolean => {
    const known = closed.get(namespace);
    if (known !== undefined) return known;
    const found = [...owners.values()].some((owner) => !mayServe(owner, [namespace]));
    closed.set(namespace, found);
    return found;
  };
  set.certificates.forEach((certificate, index) => {
    const origin = set.origins[index];
    const namespace = origin?.object.namespace ?? '';
    const names = closedTo(namespace) ? certificateNames(certificate.cert) : [];
    const foreign = names.find((name) => {
      const owner = owners.get(name);
      return owner !== undefined && !mayServe(owner, [namespace]);
    });
    const owner = foreign === undefined ? undefined : owners.get(foreign);
    if (origin === undefined || foreign === undefined || owner === undefined) {
      certificates.push(certificate);
      if (origin !== undefined) origins.push(origin);
      return;
    }
    skipped.push({
      object: origin.object,
      where: origin.where,
      message: `the certificate names ${ownedMessage(foreign, owner)}; it is left out, so it never answers for that host. ${shareHint(foreign, owner, namespace)}`,
    });
  });
  return { certificates, origins, skipped };
}

function ownedMessage(host: string, owner: HostOwner): string {
  return `host ${host} belongs to namespace ${owner.namespace} (${describeObject(owner.object)} is the oldest object claiming it)`;
}

/** How the host comes to be shared with `namespace`. */
function shareHint(host: string, owner: HostOwner, namespace: string): string {
  return `To share it, an Ingress or HTTPRoute in ${owner.namespace} claiming ${host} takes the annotation ${ALLOWED_NAMESPACES_ANNOTATION}: "${namespace}"`;
}

/** Whether `a`'s object is older than `b`'s (creation time, then `namespace/name`). */
function olderObject(a: RouteCandidate, b: RouteCandidate): boolean {
  return a.rank[0] < b.rank[0] || (a.rank[0] === b.rank[0] && a.rank[1] < b.rank[1]);
}

function objectKey(object: { readonly namespace?: string; readonly name: string }): string {
  return `${object.namespace ?? ''}/${object.name}`;
}

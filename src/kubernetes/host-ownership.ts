/**
 * Host ownership (pure): one namespace may not add paths on another namespace's host. Without it,
 * anyone who may create an Ingress in namespace `team-b` could put `/login` on `app.example.com`,
 * a host team-a serves: a page of theirs on a host users trust, receiving team-a's host cookies.
 * Portcullis fails closed, deliberately, so two namespaces sharing a host is an opt-in.
 *
 * - Owner: each host's owner is decided by host-owners.ts: the namespace that claimed it first, as
 *   recorded in the Portcullis object's `status.hostOwners` and handed in by the caller
 *   (`recorded`); a host without a record goes to the namespace of the oldest object claiming it,
 *   and a host under another namespace's wildcard (`app.example.com` under `*.example.com`) to the
 *   wildcard's owner unless it shares the wildcard. Hosts are compared in lower case.
 * - Namespace: every claim counts for its object's own namespace. An HTTPRoute attached to a
 *   shared Gateway (`allowedRoutes.namespaces.from: All`) is no exception: the listener decides
 *   attachment, never whose host it is.
 * - Sharing: `portcullis.dev/allowed_namespaces` (names separated by commas, or `*`) on an Ingress
 *   or HTTPRoute of the owner namespace lets those namespaces add paths on the hosts that object
 *   claims (and, on a wildcard, claim hosts under it).
 * - Others: their paths on the host are left out (`skipped`, reported on the object as a
 *   RouteRefused Event and in its status), one message per object and host naming the owner and
 *   how to share; every other object and host is served as before.
 * - Certificates: a listener certificate from a namespace is left out when one of its names is a
 *   host, or lies under a wildcard, owned by another namespace that does not share it with the
 *   certificate's namespace: Envoy prefers the most specific name, so team-b's certificate for
 *   `app.example.com` would otherwise win over team-a's for `app.example.com` or `*.example.com`.
 *   A wildcard certificate (`*.example.com`, say a shared Gateway's) is still served for exact
 *   hosts of other namespaces under it: Envoy prefers an owner's own exact certificate to it, so
 *   nothing of the owner's is displaced.
 */
import { ANNOTATION_PREFIX } from './annotations.js';
import {
  coveringOwner,
  decideHostOwners,
  NAMESPACE_NAME,
  sharesWith,
  type HostOwner,
  type RecordedOwner,
} from './host-owners.js';
import type { HTTPRoute } from './objects.js';
import { annotationWhere, describeObject, type ObjectProblem, type ObjectRef } from './object-problems.js';
import type { RouteCandidate } from './route-assembly.js';
import type { CertificateOrigin } from './route-provenance.js';
import { readCertificateNames, type CertificateNamesOf } from './tls-secrets.js';

export type { HostOwner } from './host-owners.js';

/** The owner's opt-in to share its hosts (a controller annotation, see annotations.ts). */
export const ALLOWED_NAMESPACES_ANNOTATION = `${ANNOTATION_PREFIX}allowed_namespaces`;

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
  const bad = items.filter((item) => item !== '*' && !NAMESPACE_NAME.test(item));
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
 * `candidates` with their HTTPRoute's `allowed_namespaces` (Ingress candidates carry theirs from
 * ingress-routes.ts), and the annotation's problems.
 */
export function withRouteShares(
  candidates: readonly RouteCandidate[],
  httpRoutes: readonly HTTPRoute[],
): { readonly candidates: readonly RouteCandidate[]; readonly problems: readonly ObjectProblem[] } {
  const byName = new Map(httpRoutes.map((route) => [objectKey(route.metadata), route]));
  const sharesOf = new Map<string, readonly string[]>();
  const problems: ObjectProblem[] = [];
  const annotated = candidates.map((candidate) => {
    if (candidate.origin.object.kind !== 'HTTPRoute') return candidate;
    const key = objectKey(candidate.origin.object);
    const route = byName.get(key);
    if (route === undefined) return candidate;
    if (!sharesOf.has(key)) {
      const read = readAllowedNamespaces(candidate.origin.object, route.metadata.annotations);
      sharesOf.set(key, read.namespaces);
      problems.push(...read.problems);
    }
    const shares = sharesOf.get(key) ?? [];
    return shares.length === 0 ? candidate : { ...candidate, sharesHostWith: shares };
  });
  return { candidates: annotated, problems };
}

/**
 * Decides each host's owner (host-owners.ts, from `recorded` and these candidates' claims) and
 * leaves out the other namespaces' claims (see the module comment).
 */
export function claimHosts(
  candidates: readonly RouteCandidate[],
  recorded: ReadonlyMap<string, RecordedOwner> = new Map(),
): ClaimedHosts {
  const owners = decideHostOwners(
    recorded,
    candidates.map((candidate) => ({
      host: candidate.host,
      namespace: namespaceOf(candidate),
      object: candidate.origin.object,
      rank: candidate.rank,
      sharesWith: candidate.sharesHostWith ?? [],
    })),
  );
  const kept: RouteCandidate[] = [];
  const skipped = new Map<string, ObjectProblem>();
  for (const claim of candidates) {
    const host = claim.host;
    const owner = owners.get(host);
    const namespace = namespaceOf(claim);
    if (owner === undefined || sharesWith(owner, namespace)) {
      kept.push(claim);
      continue;
    }
    const key = `${claim.origin.object.kind}\u0000${objectKey(claim.origin.object)}\u0000${host}`;
    if (!skipped.has(key))
      skipped.set(key, {
        object: claim.origin.object,
        where: claim.origin.keys.from ?? claim.origin.where,
        message: `${ownedMessage(host, owner)}; this object's paths on it are left out. ${shareHint(host, owner, namespace)}`,
      });
  }
  return { kept, skipped: [...skipped.values()], owners };
}

/** Listener certificates with their origins (same index), as route-source.ts hands them on. */
export interface OwnedCertificates {
  readonly certificates: readonly { readonly cert: string; readonly key: string }[];
  readonly origins: readonly CertificateOrigin[];
}

/**
 * The listener certificates a namespace may serve: one with a name that is a host, or lies under a
 * wildcard, owned by another namespace that does not share it with the certificate's namespace is
 * left out and reported on the object that referenced its Secret (see the module comment).
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
    const found = [...owners.values()].some((owner) => !sharesWith(owner, namespace));
    closed.set(namespace, found);
    return found;
  };
  set.certificates.forEach((certificate, index) => {
    const origin = set.origins[index];
    const namespace = origin?.object.namespace ?? '';
    const names = closedTo(namespace) ? certificateNames(certificate.cert) : [];
    let foreign: { readonly name: string; readonly owner: HostOwner } | undefined;
    for (const name of names) {
      const owner = nameOwner(name.toLowerCase(), owners);
      if (owner !== undefined && !sharesWith(owner, namespace)) {
        foreign = { name: name.toLowerCase(), owner };
        break;
      }
    }
    if (origin === undefined || foreign === undefined) {
      certificates.push(certificate);
      if (origin !== undefined) origins.push(origin);
      return;
    }
    skipped.push({
      object: origin.object,
      where: origin.where,
      message: `the certificate names ${ownedMessage(foreign.name, foreign.owner)}; it is left out, so it never answers for that host. ${shareHint(foreign.name, foreign.owner, namespace)}`,
    });
  });
  return { certificates, origins, skipped };
}

/** The owner of a certificate name: of the host itself, else of the nearest wildcard over it. */
function nameOwner(name: string, owners: ReadonlyMap<string, HostOwner>): HostOwner | undefined {
  const own = owners.get(name);
  if (own !== undefined) return own;
  const cover = coveringOwner(name, owners);
  return cover === undefined ? undefined : { ...cover.owner, coveredBy: cover.wildcard };
}

/** `host H belongs to namespace N (why)`: the object that holds it, or the record. */
function ownedMessage(host: string, owner: HostOwner): string {
  const holder = owner.object === undefined ? undefined : describeObject(owner.object);
  const why =
    owner.coveredBy !== undefined
      ? `${holder ?? `namespace ${owner.namespace}`} claims ${owner.coveredBy}, which covers it`
      : holder !== undefined
        ? `${holder} claims it; the first namespace to claim a host keeps it`
        : `recorded in the Portcullis object's status.hostOwners: the first namespace to claim a host keeps it while any object claims it`;
  return `host ${host} belongs to namespace ${owner.namespace} (${why})`;
}

/** How the host comes to be shared with `namespace`. */
function shareHint(host: string, owner: HostOwner, namespace: string): string {
  return `To share it, an Ingress or HTTPRoute in ${owner.namespace} claiming ${owner.coveredBy ?? host} takes the annotation ${ALLOWED_NAMESPACES_ANNOTATION}: "${namespace}"`;
}

/** The namespace a candidate's claim counts for: its object's own. */
function namespaceOf(candidate: RouteCandidate): string {
  return candidate.origin.object.namespace ?? 'default';
}

function objectKey(object: { readonly namespace?: string; readonly name: string }): string {
  return `${object.namespace ?? ''}/${object.name}`;
}

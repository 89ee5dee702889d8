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
 * - Certificates: ordered, never left out. Envoy picks a listener certificate by SNI, an exact
 *   name before a wildcard, and among certificates with the same name the first loaded
 *   (arch_overview/security/ssl, "Certificate selection"; edge-tls.ts relies on the same rule).
 *   So every certificate serves, in the order given (oldest object first), except that one naming
 *   a host, or a name under a wildcard, owned by another namespace that does not share it with the
 *   certificate's namespace goes after all the others and is reported (`skipped`, a warning on the
 *   object that referenced its Secret, naming the owner): the owner's own certificate for that
 *   name wins, and one tenant's claim never takes a certificate (a shared Gateway's for
 *   `example.com` and `*.example.com`, or team-a's naming a host team-b claimed later) away from
 *   the other hosts it serves. What stays: a foreign certificate naming a host exactly answers for
 *   it while the owner has no certificate with that very name (an owner's wildcard loses to it).
 */
import { ANNOTATION_PREFIX } from './annotations.js';
import {
  coveringOwner,
  decideHostOwners,
  NAMESPACE_NAME,
  sharesWith,
  type HostClaim,
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
 * leaves out the other namespaces' claims (see the module comment). Every host of `recorded` the
 * owner holds itself counts as claimed by its owner, with the namespaces a decided owner
 * (HostOwner) shares it with, whether or not an object of the owner is among `candidates`: an
 * owner's wildcard keeps covering the hosts under it while the owner's object is refused or left
 * out of this build. Hosts `recorded` has through a wildcard (`coveredBy`) are decided again from
 * that wildcard.
 */
export function claimHosts(
  candidates: readonly RouteCandidate[],
  recorded: ReadonlyMap<string, RecordedOwner | HostOwner> = new Map(),
): ClaimedHosts {
  const held = [...recorded].filter(([, owner]) => !('coveredBy' in owner && owner.coveredBy !== undefined));
  // Each recorded claim's stand-in object, and the object the record names (if any) in its place.
  const standIns = new Map<ObjectRef, ObjectRef | undefined>();
  const decided = decideHostOwners(new Map(held), [
    ...candidates.map((candidate) => ({
      host: candidate.host,
      namespace: namespaceOf(candidate),
      object: candidate.origin.object,
      rank: candidate.rank,
      sharesWith: candidate.sharesHostWith ?? [],
    })),
    ...held.map(([host, owner]) => recordedClaim(host, owner, standIns)),
  ]);
  const owners = new Map(
    [...decided].map(([host, owner]) =>
      owner.object !== undefined && standIns.has(owner.object)
        ? [host, { ...owner, object: standIns.get(owner.object) }]
        : [host, owner],
    ),
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
 * Every listener certificate, ordered so that an owner's own certificate wins by SNI: first, in
 * the order given (oldest first), those whose names are all hosts their namespace may serve or
 * that no one owns; after them, in the order given, those naming a host (or lying under a
 * wildcard) owned by another namespace that does not share it with the certificate's namespace,
 * each reported on the object that referenced its Secret as a warning naming the owner. Nothing is
 * left out: one tenant's claim never takes a certificate away from another's hosts (see the
 * module comment).
 */
export function ownedCertificates(
  set: OwnedCertificates,
  owners: ReadonlyMap<string, HostOwner>,
  certificateNames: CertificateNamesOf = readCertificateNames,
): OwnedCertificates & { readonly skipped: readonly ObjectProblem[] } {
  type Entry = {
    readonly certificate: { readonly cert: string; readonly key: string };
    readonly origin: CertificateOrigin | undefined;
  };
  const servable: Entry[] = [];
  const after: Entry[] = [];
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
    const foreign =
      origin === undefined || !closedTo(namespace)
        ? undefined
        : foreignName(certificateNames(certificate.cert), namespace, owners);
    if (origin === undefined || foreign === undefined) {
      servable.push({ certificate, origin });
      return;
    }
    after.push({ certificate, origin });
    skipped.push({
      object: origin.object,
      where: origin.where,
      message: `the certificate names ${ownedMessage(foreign.name, foreign.owner)}; it is still served, after that namespace's certificates, so for ${foreign.name} it answers only while namespace ${foreign.owner.namespace} has no certificate of its own with that very name. ${shareHint(foreign.name, foreign.owner, namespace)}`,
    });
  });
  const ordered = [...servable, ...after];
  return {
    certificates: ordered.map((entry) => entry.certificate),
    origins: ordered.flatMap((entry) => (entry.origin === undefined ? [] : [entry.origin])),
    skipped,
  };
}

/** The first of `names` (lower-cased) owned by a namespace that does not share it with `namespace`. */
function foreignName(
  names: readonly string[],
  namespace: string,
  owners: ReadonlyMap<string, HostOwner>,
): { readonly name: string; readonly owner: HostOwner } | undefined {
  for (const name of names.map((item) => item.toLowerCase())) {
    const owner = nameOwner(name, owners);
    if (owner !== undefined && !sharesWith(owner, namespace)) return { name, owner };
  }
  return undefined;
}

/**
 * The claim a recorded owner makes on its host: ranked after every object (so an object of the
 * owner claiming the host is still the one its messages name), with what a decided owner shares.
 */
function recordedClaim(
  host: string,
  owner: RecordedOwner | HostOwner,
  standIns: Map<ObjectRef, ObjectRef | undefined>,
): HostClaim {
  // A claim needs an object; the record may name none, so a stand-in, swapped back after deciding.
  const standIn: ObjectRef = { kind: 'status.hostOwners', name: host };
  standIns.set(standIn, owner.object);
  return {
    host,
    namespace: owner.namespace,
    object: standIn,
    rank: ['\uffff', owner.namespace],
    sharesWith: 'sharedWith' in owner ? [...owner.sharedWith] : [],
  };
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

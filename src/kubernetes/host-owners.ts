/**
 * Who owns each host (pure): the rule host-ownership.ts serves by and the Lease holder records in
 * the Portcullis `global` object's `status.hostOwners` (host -> namespace), which every replica
 * reads back, so a host's owner is the namespace that claimed it first and stays so:
 *
 * - Recorded: a host with a recorded owner keeps it while any Ingress or HTTPRoute claims the host,
 *   whatever becomes of the owner's objects (refused, replaced by their last accepted version, left
 *   out, deleted and created again). Another namespace's claim is left out, so it never builds the
 *   standing to replace the owner: an old object edited to add the host, or a squatter waiting for
 *   the owner's Helm reinstall, gets nothing. Once no object claims the host, its record is dropped
 *   (the record holds claimed hosts only), and the next claim decides anew.
 * - New: a host without a record goes to the namespace of the oldest object claiming it (creation
 *   time, then `namespace/name`), hosts decided in the order of their oldest claim.
 * - Wildcards: an exact host or a longer wildcard under a wildcard another namespace owns
 *   (`app.example.com` or `*.app.example.com` under `*.example.com`, one or more labels, as Envoy
 *   matches) belongs to the wildcard's owner unless that owner shares the wildcard with the
 *   claimant's namespace; then the claimant's namespace owns it like any new host. `*` (every host)
 *   covers nothing: it is a default, owned only as itself. A host recorded before the wildcard was
 *   claimed stays its owner's.
 *
 * Where it does not protect yet (docs/kubernetes.md, "Multi-tenant safety", lists them): before a
 * host has a record (a new cluster, the first pass after an upgrade, a re-created `global`), or while
 * the Lease holder cannot write status (a record grown past the object size limit), the
 * oldest-object rule decides; and a record dropped when the last claim goes away (a delete and
 * create) lets another namespace's wildcard over the host take it.
 */
import { isPlainObject } from '../config/value-readers.js';
import type { ObjectRef } from './object-problems.js';

/** One object's claim on one host, from its spec. */
export interface HostClaim {
  /** Lower case: `app.example.com`, `*.example.com`, or `*` for every host. */
  readonly host: string;
  readonly namespace: string;
  readonly object: ObjectRef;
  /** Creation time, then `namespace/name` (route-assembly.ts rankOf). */
  readonly rank: readonly [string, string, ...unknown[]];
  /** What the object's `portcullis.dev/allowed_namespaces` names (`*`: every namespace). */
  readonly sharesWith: readonly string[];
}

/** A recorded owner (status.hostOwners) and, when known, an object of its that claims the host. */
export interface RecordedOwner {
  readonly namespace: string;
  readonly object?: ObjectRef | undefined;
}

/** Who owns a host and whom it shares it with. */
export interface HostOwner {
  readonly namespace: string;
  /** An object of the owner claiming the host (its oldest), or the wildcard (see `coveredBy`). */
  readonly object: ObjectRef | undefined;
  /** Namespaces the owner's `allowed_namespaces` annotations name on this host (`*`: every one). */
  readonly sharedWith: ReadonlySet<string>;
  /** The owner's wildcard this host lies under, when the owner does not claim the host itself. */
  readonly coveredBy?: string;
}

/** A namespace name (an RFC 1123 label, as the API server checks it). */
export const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Whether `owner` lets `namespace` serve on its host. */
export function sharesWith(owner: HostOwner, namespace: string): boolean {
  return namespace === owner.namespace || owner.sharedWith.has('*') || owner.sharedWith.has(namespace);
}

/**
 * The wildcards that would cover `host` in Envoy, nearest first: `*.b.example.com`, then
 * `*.example.com`, `*.com` for `a.b.example.com` (and for `*.b.example.com`, all but itself).
 * `*` is not among them.
 */
export function coveringWildcards(host: string): string[] {
  if (host === '*') return [];
  const labels = (host.startsWith('*.') ? host.slice(2) : host).split('.');
  return labels.slice(1).map((_, index) => `*.${labels.slice(index + 1).join('.')}`);
}

/** The owner of the nearest wildcard over `host` that its owner claims itself, with that wildcard. */
export function coveringOwner(
  host: string,
  owners: ReadonlyMap<string, HostOwner>,
): { readonly wildcard: string; readonly owner: HostOwner } | undefined {
  for (const wildcard of coveringWildcards(host)) {
    const owner = owners.get(wildcard);
    if (owner !== undefined && owner.coveredBy === undefined) return { wildcard, owner };
  }
  return undefined;
}

/** Decides each claimed host's owner from the record and the claims (see the module comment). */
export function decideHostOwners(
  recorded: ReadonlyMap<string, RecordedOwner>,
  claims: readonly HostClaim[],
): Map<string, HostOwner> {
  const byHost = new Map<string, HostClaim[]>();
  for (const claim of claims) {
    const list = byHost.get(claim.host) ?? [];
    list.push(claim);
    byHost.set(claim.host, list);
  }
  const owners = new Map<string, HostOwner>();
  const ownedBy = (host: string, list: readonly HostClaim[], namespace: string): HostOwner => {
    const own = list.filter((claim) => claim.namespace === namespace);
    const oldest = own.length === 0 ? undefined : own.reduce((a, b) => (older(b, a) ? b : a));
    return {
      namespace,
      object: oldest?.object ?? recorded.get(host)?.object,
      sharedWith: new Set(own.flatMap((claim) => claim.sharesWith)),
    };
  };
  for (const [host, list] of byHost) {
    const record = recorded.get(host);
    if (record !== undefined) owners.set(host, ownedBy(host, list, record.namespace));
  }
  const open = [...byHost]
    .filter(([host]) => !owners.has(host))
    .map(([host, list]) => ({ host, list, oldest: list.reduce((a, b) => (older(b, a) ? b : a)) }))
    .sort((a, b) =>
      older(a.oldest, b.oldest) ? -1 : older(b.oldest, a.oldest) ? 1 : a.host < b.host ? -1 : 1,
    );
  for (const { host, list } of open) {
    const cover = coveringOwner(host, owners);
    const eligible =
      cover === undefined ? list : list.filter((claim) => sharesWith(cover.owner, claim.namespace));
    if (cover !== undefined && eligible.length === 0) {
      owners.set(host, {
        namespace: cover.owner.namespace,
        object: cover.owner.object,
        sharedWith: new Set(),
        coveredBy: cover.wildcard,
      });
      continue;
    }
    const first = eligible.reduce((a, b) => (older(b, a) ? b : a));
    owners.set(host, ownedBy(host, list, first.namespace));
  }
  return owners;
}

/**
 * The hosts of `owners` their owner holds itself (not through a wildcard): what is recorded, and
 * what the route source takes as the record for its build (RouteSourceInput.hostOwners).
 */
export function heldHostOwners(owners: ReadonlyMap<string, HostOwner>): Map<string, RecordedOwner> {
  const held = new Map<string, RecordedOwner>();
  for (const [host, owner] of owners)
    if (owner.coveredBy === undefined) held.set(host, { namespace: owner.namespace, object: owner.object });
  return held;
}

/** `status.hostOwners` for `held` (heldHostOwners): host -> namespace, hosts sorted. */
export function hostOwnersRecord(held: ReadonlyMap<string, RecordedOwner>): Record<string, string> {
  const record: Record<string, string> = {};
  for (const host of [...held.keys()].sort()) record[host] = held.get(host)?.namespace ?? '';
  return record;
}

/**
 * The owners recorded in the settings object's `status` (unknown data from the API server): each
 * `status.hostOwners` entry whose value is a namespace name; anything else is not a record.
 */
export function recordedHostOwners(status: unknown): Map<string, RecordedOwner> {
  const found = new Map<string, RecordedOwner>();
  const record = isPlainObject(status) ? status.hostOwners : undefined;
  if (!isPlainObject(record)) return found;
  for (const [host, namespace] of Object.entries(record)) {
    if (typeof namespace === 'string' && NAMESPACE_NAME.test(namespace))
      found.set(host.toLowerCase(), { namespace });
  }
  return found;
}

/** Whether `a`'s object is older than `b`'s (creation time, then `namespace/name`). */
function older(a: HostClaim, b: HostClaim): boolean {
  return a.rank[0] < b.rank[0] || (a.rank[0] === b.rank[0] && a.rank[1] < b.rank[1]);
}

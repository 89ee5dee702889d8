import { CLUSTER_LOAD_ASSIGNMENT_TYPE, CLUSTER_TYPE, type ResourceType } from '../../proto/type-urls.js';
import { snapshotOf } from './build-snapshot.js';
import type { EncodedResource, Snapshot } from './types.js';

/**
 * The types whose resources are kept a while after a build drops them: clusters and their
 * endpoints, which routes refer to by name. Envoy must not lose them before it holds routes that
 * no longer refer to them (make-before-break; xds/publish/make-before-break.ts decides when).
 */
export const RETIRING_TYPES = [CLUSTER_TYPE, CLUSTER_LOAD_ASSIGNMENT_TYPE] as const;

/** Resources on their way out, per retiring type, by name (encoded exactly as last served). */
export type Retiring = Readonly<
  Record<(typeof RETIRING_TYPES)[number], ReadonlyMap<string, EncodedResource>>
>;

/**
 * What `served` (the snapshot Envoy was last given, itself perhaps carrying retiring resources)
 * has of the retiring types that `next` lacks: the resources to keep serving beside `next` until
 * no Envoy refers to them. Whatever `next` has again (same name) is not retiring: `next`'s
 * version of it wins. Pure.
 */
export function retiredBy(served: Snapshot, next: Snapshot): Retiring {
  const pick = (type: ResourceType): ReadonlyMap<string, EncodedResource> => {
    const kept = new Map<string, EncodedResource>();
    // The same resources (one map, or one content-hashed type version): nothing retires.
    if (sameType(served, next, type)) return kept;
    for (const [name, resource] of served.resources[type]) {
      if (!next.resources[type].has(name)) kept.set(name, resource);
    }
    return kept;
  };
  return {
    [CLUSTER_TYPE]: pick(CLUSTER_TYPE),
    [CLUSTER_LOAD_ASSIGNMENT_TYPE]: pick(CLUSTER_LOAD_ASSIGNMENT_TYPE),
  };
}

/** True when `retiring` holds no resource. */
export function isEmptyRetiring(retiring: Retiring): boolean {
  return RETIRING_TYPES.every((type) => retiring[type].size === 0);
}

/**
 * `next` plus the `retiring` resources (names `next` lacks; see `retiredBy`), each type's map in
 * name order, versioned like any snapshot (content hashes: the same inputs give the same
 * versions). Still consistent: a retiring EDS cluster retires with its ClusterLoadAssignment, and
 * extra clusters refer to nothing. Listeners and routes are `next`'s own, unchanged, so their
 * versions equal `next`'s. `next` itself when nothing retires. Pure.
 */
export function withRetiring(next: Snapshot, retiring: Retiring): Snapshot {
  if (isEmptyRetiring(retiring)) return next;
  const resources = { ...next.resources };
  const known: Partial<Record<ResourceType, string>> = { ...next.typeVersions };
  for (const type of RETIRING_TYPES) {
    if (retiring[type].size === 0) continue;
    const merged = [...next.resources[type].values(), ...retiring[type].values()];
    merged.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    resources[type] = new Map(merged.map((resource) => [resource.name, resource]));
    delete known[type];
  }
  return snapshotOf(resources, known);
}

/**
 * `served`'s listeners, scopes and route configurations with `next`'s clusters and endpoints plus
 * those `served` has and `next` lacks: the first step of a change that adds clusters. Envoy gets
 * (and warms) the new clusters while every route still refers only to clusters it already has,
 * and routes move to the new clusters in a later snapshot. Consistent, since every cluster
 * `served` had is still there. Pure, versioned by content like any snapshot.
 */
export function withClustersOf(served: Snapshot, next: Snapshot): Snapshot {
  const known = {
    ...served.typeVersions,
    [CLUSTER_TYPE]: next.typeVersions[CLUSTER_TYPE],
    [CLUSTER_LOAD_ASSIGNMENT_TYPE]: next.typeVersions[CLUSTER_LOAD_ASSIGNMENT_TYPE],
  };
  return withRetiring(
    snapshotOf({ ...served.resources, ...clustersOf(next) }, known),
    retiredBy(served, next),
  );
}

/**
 * True when `next` has a cluster or endpoints name `served` lacks: routes of `next` would refer to
 * something Envoy does not have yet.
 */
export function addsClusters(served: Snapshot, next: Snapshot): boolean {
  return RETIRING_TYPES.some((type) => {
    if (sameType(served, next, type)) return false;
    for (const name of next.resources[type].keys()) if (!served.resources[type].has(name)) return true;
    return false;
  });
}

/** `a` and `b` hold the same resources of `type`: the very same map, or equal type versions. */
function sameType(a: Snapshot, b: Snapshot, type: ResourceType): boolean {
  return a.resources[type] === b.resources[type] || a.typeVersions[type] === b.typeVersions[type];
}

function clustersOf(snapshot: Snapshot): Pick<Snapshot['resources'], (typeof RETIRING_TYPES)[number]> {
  return {
    [CLUSTER_TYPE]: snapshot.resources[CLUSTER_TYPE],
    [CLUSTER_LOAD_ASSIGNMENT_TYPE]: snapshot.resources[CLUSTER_LOAD_ASSIGNMENT_TYPE],
  };
}

import type { Problem } from '../../shared/errors.js';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  LISTENER_TYPE,
  ROUTE_CONFIGURATION_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
} from '../codec/type-urls.js';
import type { CompiledResource, CompiledResources } from '../compile/compile.js';
import { isEdsResource, messageOf, referencesOf, sameCompiledResource } from '../compile/lazy-resource.js';
import { findSortedByName, isSortedImmutableList } from './sorted-by-name.js';
import { sortedChanges, type SortedChanges } from '../../shared/sorted-changes.js';

/** The names of `resources`, as a set. */
function namesOf(resources: readonly CompiledResource[]): Set<string> {
  const names = new Set<string>();
  for (const resource of resources) names.add(resource.name);
  return names;
}

/**
 * Calls `visit` with each (virtual host, cluster) a RouteConfiguration points at (its facts, see
 * `referencesOf`), until it returns false; true when every call returned true.
 */
function everyClusterReference(
  routeConfiguration: CompiledResource,
  visit: (vhost: string, cluster: string) => boolean,
): boolean {
  const references = referencesOf(ROUTE_CONFIGURATION_TYPE, routeConfiguration);
  for (let i = 0; i + 1 < references.length; i += 2) {
    if (!visit(references[i] as string, references[i + 1] as string)) return false;
  }
  return true;
}

/** The RouteConfiguration a scope names (undefined: none). */
function scopeTarget(scope: CompiledResource): string | undefined {
  return referencesOf(SCOPED_ROUTE_CONFIGURATION_TYPE, scope)[0];
}

/** Whether a compiled cluster is an EDS cluster (needs a ClusterLoadAssignment). */
function isEdsCluster(cluster: CompiledResource): boolean {
  return isEdsResource(CLUSTER_TYPE, cluster);
}

/**
 * Checks that a snapshot is self-consistent before it is published: every EDS cluster has its
 * endpoints, every route names an existing cluster, every scope names an existing route
 * configuration, and the listener's RDS name exists. A snapshot that fails is never published
 * (Envoy would blackhole traffic), and the problems are reported. Pure; see
 * `IncrementalConsistencyCheck` for the same answer at the cost of what changed.
 */
export function checkConsistency(compiled: CompiledResources): Problem[] {
  return fullCheck(compiled).problems;
}

/**
 * The full check, and the reference counts the incremental check keeps, built in the same walks.
 * With the lists sorted by name (as compile emits them) it builds no name tables: a cluster has
 * its endpoints by a merge walk of the two lists, and every referenced name exists when each key
 * of the reference counts is found among the sorted names. Only when something is missing (or a
 * list is out of order) does it walk again with name sets, to report each problem in order.
 */
function fullCheck(compiled: CompiledResources): {
  problems: Problem[];
  state: CheckedState | undefined;
} {
  const problems: Problem[] = [];
  const clusters = compiled[CLUSTER_TYPE];
  const endpoints = compiled[CLUSTER_LOAD_ASSIGNMENT_TYPE];
  const routeConfigs = compiled[ROUTE_CONFIGURATION_TYPE];
  const scopes = compiled[SCOPED_ROUTE_CONFIGURATION_TYPE];
  const sorted = sortedLists(compiled);
  const endpointNames = sorted ? undefined : namesOf(endpoints);
  let next = 0;
  for (const cluster of clusters) {
    if (!isEdsCluster(cluster)) continue;
    const name = cluster.name;
    let found: boolean;
    if (endpointNames === undefined) {
      while (next < endpoints.length && (endpoints[next] as CompiledResource).name < name) next++;
      found = endpoints[next]?.name === name;
    } else found = endpointNames.has(name);
    if (!found)
      problems.push({ path: `clusters.${name}`, message: 'EDS cluster has no ClusterLoadAssignment' });
  }
  const clusterUses = new Map<string, number>();
  for (const routeConfig of routeConfigs) {
    everyClusterReference(routeConfig, (_, cluster) => {
      count(clusterUses, cluster, 1);
      return true;
    });
  }
  if (!sorted || !everyKeyNamed(clusterUses, clusters)) {
    const clusterNames = namesOf(clusters);
    for (const routeConfig of routeConfigs) {
      everyClusterReference(routeConfig, (vhost, cluster) => {
        if (!clusterNames.has(cluster))
          problems.push({ path: `routes.${vhost}`, message: `route points at unknown cluster ${cluster}` });
        return true;
      });
    }
  }
  // Per-host scopes name their RouteConfiguration (route-configuration.ts); Envoy would wait on a
  // missing one forever, leaving the host unrouted.
  const routeConfigUses = new Map<string, number>();
  let unnamed = false;
  for (const scope of scopes) {
    const target = scopeTarget(scope);
    if (target === undefined) unnamed = true;
    else count(routeConfigUses, target, 1);
  }
  if (unnamed || !sorted || !everyKeyNamed(routeConfigUses, routeConfigs)) {
    const routeConfigNames = namesOf(routeConfigs);
    for (const scope of scopes) {
      const target = scopeTarget(scope);
      if (target === undefined || !routeConfigNames.has(target)) {
        problems.push({
          path: `scopes.${scope.name}`,
          message: `scope references unknown route configuration ${target ?? '(none)'}`,
        });
      }
    }
  }
  problems.push(...listenerProblems(compiled, (name) => hasName(routeConfigs, name, sorted)));
  // The incremental check relies on sorted lists; without them it has no state to keep.
  return { problems, state: sorted ? { compiled, clusterUses, routeConfigUses } : undefined };
}

/**
 * Whether every key of `uses` is the name of a resource in `list`, which is sorted by strictly
 * increasing name (so its names are distinct): the names found among the keys must number as
 * many as the keys.
 */
function everyKeyNamed(uses: ReadonlyMap<string, number>, list: readonly CompiledResource[]): boolean {
  let found = 0;
  for (const { name } of list) if (uses.has(name)) found++;
  return found === uses.size;
}

/** Whether `list` holds a resource named `name`: a binary search when it is sorted, else a scan. */
function hasName(list: readonly CompiledResource[], name: string, sorted: boolean): boolean {
  return sorted
    ? findSortedByName(list, name) !== undefined
    : list.some((resource) => resource.name === name);
}

function listenerProblems(compiled: CompiledResources, hasRouteConfig: (name: string) => boolean): Problem[] {
  const problems: Problem[] = [];
  for (const listener of compiled[LISTENER_TYPE]) {
    const name = listener.name;
    const text = JSON.stringify(messageOf(LISTENER_TYPE, listener));
    for (const match of text.matchAll(/"route_config_name":"([^"]+)"/g)) {
      if (!hasRouteConfig(match[1] as string)) {
        problems.push({
          path: `listeners.${name}`,
          message: `listener references unknown route configuration ${match[1]}`,
        });
      }
    }
  }
  return problems;
}

type ListChange = SortedChanges<CompiledResource>;

/**
 * At most this many resources of one type may change for the incremental path: it pays a few
 * table edits per change where the full check pays about one lookup per resource, so a larger
 * change (a cold build changes everything: ~60 ms the incremental way at 10,000 routes against
 * ~7 ms in full) is checked in full.
 */
const MAX_QUICK_CHANGES = 256;

/**
 * The change of one list since the last check (see `sortedChanges`); the same resource (see
 * `sameCompiledResource`) is unchanged.
 * Undefined also when more than `MAX_QUICK_CHANGES` resources left and arrived.
 */
function listChange(
  before: readonly CompiledResource[],
  after: readonly CompiledResource[],
): ListChange | undefined {
  return sortedChanges(before, after, sameCompiledResource, MAX_QUICK_CHANGES);
}

/**
 * What the last passing check saw (its lists sorted by name, so names are found by binary search)
 * and the reference counts built from it.
 */
interface CheckedState {
  readonly compiled: CompiledResources;
  /** Cluster name -> how many routes point at it. */
  readonly clusterUses: Map<string, number>;
  /** RouteConfiguration name -> how many scopes name it. */
  readonly routeConfigUses: Map<string, number>;
}

function count(map: Map<string, number>, key: string, by: number): void {
  const next = (map.get(key) ?? 0) + by;
  if (next === 0) map.delete(key);
  else map.set(key, next);
}

/**
 * `checkConsistency` at the cost of what changed since the last passing check: it keeps the last
 * compiled resources it passed (sorted by name) and their reference counts, applies each list's change
 * (found by a merge walk, see `listChange`), and checks only what arrived plus what left while
 * still referenced. Whenever anything looks wrong, or a list is not sorted, or a type changed in
 * more than `MAX_QUICK_CHANGES` resources, or there is no earlier state, it runs the full check
 * (which rebuilds the state in the same walks), so its problems are always exactly the full
 * check's; a failing check forgets its state. At 10,000 routes the full check costs ~7 ms.
 */
export class IncrementalConsistencyCheck {
  private state: CheckedState | undefined;
  /** Checks answered from what changed alone (the rest ran in full): for tests and metrics. */
  quickChecks = 0;

  /** The problems `checkConsistency(compiled)` reports (none: publishable). */
  check(compiled: CompiledResources): Problem[] {
    const quick = this.state === undefined ? undefined : this.quickCheck(this.state, compiled);
    if (quick === true) {
      this.quickChecks += 1;
      return [];
    }
    const { problems, state } = fullCheck(compiled);
    this.state = problems.length === 0 ? state : undefined;
    return problems;
  }

  /** True when the change keeps everything consistent (state updated); undefined: check in full. */
  private quickCheck(state: CheckedState, compiled: CompiledResources): true | undefined {
    const before = state.compiled;
    const clusters = listChange(before[CLUSTER_TYPE], compiled[CLUSTER_TYPE]);
    const endpoints = listChange(
      before[CLUSTER_LOAD_ASSIGNMENT_TYPE],
      compiled[CLUSTER_LOAD_ASSIGNMENT_TYPE],
    );
    const routes = listChange(before[ROUTE_CONFIGURATION_TYPE], compiled[ROUTE_CONFIGURATION_TYPE]);
    const scopes = listChange(
      before[SCOPED_ROUTE_CONFIGURATION_TYPE],
      compiled[SCOPED_ROUTE_CONFIGURATION_TYPE],
    );
    if (clusters === undefined || endpoints === undefined || routes === undefined || scopes === undefined) {
      this.state = undefined;
      return undefined;
    }
    // From here the state is edited in place; any failure drops it (the full check rebuilds it).
    // The new lists are sorted (`sortedChanges` checked what it did not find unchanged).
    this.state = undefined;
    const isCluster = (name: string): boolean => findSortedByName(compiled[CLUSTER_TYPE], name) !== undefined;
    const isRouteConfig = (name: string): boolean =>
      findSortedByName(compiled[ROUTE_CONFIGURATION_TYPE], name) !== undefined;
    const hasEndpoints = (name: string): boolean =>
      findSortedByName(compiled[CLUSTER_LOAD_ASSIGNMENT_TYPE], name) !== undefined;
    for (const routeConfig of routes.removed) {
      everyClusterReference(routeConfig, (_, cluster) => {
        count(state.clusterUses, cluster, -1);
        return true;
      });
    }
    for (const routeConfig of routes.added) {
      const known = everyClusterReference(routeConfig, (_, cluster) => {
        if (!isCluster(cluster)) return false;
        count(state.clusterUses, cluster, 1);
        return true;
      });
      if (!known) return undefined;
    }
    for (const scope of scopes.removed) {
      const target = scopeTarget(scope);
      if (target !== undefined) count(state.routeConfigUses, target, -1);
    }
    for (const scope of scopes.added) {
      const target = scopeTarget(scope);
      if (target === undefined || !isRouteConfig(target)) return undefined;
      count(state.routeConfigUses, target, 1);
    }
    // Whatever left must no longer be needed.
    for (const { name } of clusters.removed)
      if (!isCluster(name) && state.clusterUses.has(name)) return undefined;
    for (const { name } of routes.removed)
      if (!isRouteConfig(name) && state.routeConfigUses.has(name)) return undefined;
    for (const cluster of clusters.added)
      if (isEdsCluster(cluster) && !hasEndpoints(cluster.name)) return undefined;
    for (const { name } of endpoints.removed) {
      if (hasEndpoints(name)) continue;
      const cluster = findSortedByName(compiled[CLUSTER_TYPE], name);
      if (cluster !== undefined && isEdsCluster(cluster)) return undefined;
    }
    if (listenerProblems(compiled, isRouteConfig).length > 0) return undefined;
    this.state = { ...state, compiled };
    return true;
  }
}

/** True when every list the quick check walks is strictly sorted by name. */
function sortedLists(compiled: CompiledResources): boolean {
  return [
    CLUSTER_TYPE,
    CLUSTER_LOAD_ASSIGNMENT_TYPE,
    ROUTE_CONFIGURATION_TYPE,
    SCOPED_ROUTE_CONFIGURATION_TYPE,
  ].every((type) => isSortedImmutableList(compiled[type as keyof CompiledResources]));
}

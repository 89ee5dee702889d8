import type { Problem } from '../../shared/errors.js';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  LISTENER_TYPE,
  ROUTE_CONFIGURATION_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
} from '../codec/type-urls.js';
import type { CompiledResource, CompiledResources } from '../compile/compile.js';
import { isSortedByName } from './sorted-by-name.js';
import { sortedChanges, type SortedChanges } from '../../shared/sorted-changes.js';

/** The parts of a compiled RouteConfiguration message the checks read. */
interface RouteConfigurationShape {
  readonly virtual_hosts?: readonly {
    readonly name: string;
    readonly routes: readonly { readonly route?: { readonly cluster?: string } }[];
  }[];
}

/** The names of `resources`, as a set. */
function namesOf(resources: readonly CompiledResource[]): Set<string> {
  const names = new Set<string>();
  for (const resource of resources) names.add(resource.name);
  return names;
}

/**
 * Calls `visit` with each (virtual host, cluster) a RouteConfiguration message points at, until
 * it returns false; true when every call returned true. Walked in place each time: no list of
 * references per message (10,000 of them on a cold build), and a per-message memo cost more (one
 * table insertion per route configuration) than it saved (a reload looks at the few that changed).
 */
function everyClusterReference(message: object, visit: (vhost: string, cluster: string) => boolean): boolean {
  for (const vhost of (message as RouteConfigurationShape).virtual_hosts ?? []) {
    for (const route of vhost.routes) {
      const cluster = route.route?.cluster;
      if (cluster !== undefined && !visit(vhost.name, cluster)) return false;
    }
  }
  return true;
}

/** The RouteConfiguration a scope names (undefined: none). */
function scopeTarget(scope: CompiledResource): string | undefined {
  return scope.message.route_configuration_name as string | undefined;
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
 * The full check, and the indexes the incremental check keeps, built in the same walks: a cold
 * build pays for one set of name tables, not one for the check and another for the state.
 */
function fullCheck(compiled: CompiledResources): { problems: Problem[]; state: CheckedState } {
  const problems: Problem[] = [];
  const clusterNames = namesOf(compiled[CLUSTER_TYPE]);
  const endpointNames = namesOf(compiled[CLUSTER_LOAD_ASSIGNMENT_TYPE]);
  const routeConfigNames = namesOf(compiled[ROUTE_CONFIGURATION_TYPE]);
  const clusterUses = new Map<string, number>();
  const routeConfigUses = new Map<string, number>();
  for (const { name, message } of compiled[CLUSTER_TYPE]) {
    if (message.type === 'EDS' && !endpointNames.has(name)) {
      problems.push({ path: `clusters.${name}`, message: 'EDS cluster has no ClusterLoadAssignment' });
    }
  }
  for (const { message } of compiled[ROUTE_CONFIGURATION_TYPE]) {
    everyClusterReference(message, (vhost, cluster) => {
      if (!clusterNames.has(cluster))
        problems.push({ path: `routes.${vhost}`, message: `route points at unknown cluster ${cluster}` });
      count(clusterUses, cluster, 1);
      return true;
    });
  }
  // Per-host scopes name their RouteConfiguration (route-configuration.ts); Envoy would wait on a
  // missing one forever, leaving the host unrouted.
  for (const scope of compiled[SCOPED_ROUTE_CONFIGURATION_TYPE]) {
    const target = scopeTarget(scope);
    if (target === undefined || !routeConfigNames.has(target)) {
      problems.push({
        path: `scopes.${scope.name}`,
        message: `scope references unknown route configuration ${target ?? '(none)'}`,
      });
    }
    if (target !== undefined) count(routeConfigUses, target, 1);
  }
  problems.push(...listenerProblems(compiled, (name) => routeConfigNames.has(name)));
  return {
    problems,
    state: { compiled, clusterNames, endpointNames, routeConfigNames, clusterUses, routeConfigUses },
  };
}

function listenerProblems(compiled: CompiledResources, hasRouteConfig: (name: string) => boolean): Problem[] {
  const problems: Problem[] = [];
  for (const { name, message } of compiled[LISTENER_TYPE]) {
    const text = JSON.stringify(message);
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
 * ~10 ms in full) is checked in full.
 */
const MAX_QUICK_CHANGES = 256;

/**
 * The change of one list since the last check (see `sortedChanges`); same message, unchanged.
 * Undefined also when more than `MAX_QUICK_CHANGES` resources left and arrived.
 */
function listChange(
  before: readonly CompiledResource[],
  after: readonly CompiledResource[],
): ListChange | undefined {
  return sortedChanges(before, after, (old, now) => old.message === now.message, MAX_QUICK_CHANGES);
}

/** What the last passing check saw, and the indexes built from it. */
interface CheckedState {
  readonly compiled: CompiledResources;
  readonly clusterNames: Set<string>;
  readonly endpointNames: Set<string>;
  readonly routeConfigNames: Set<string>;
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
 * `checkConsistency` at the cost of what changed since the last passing check: it keeps the name
 * sets and reference counts of the last compiled resources it passed, applies each list's change
 * (found by a merge walk, see `listChange`), and checks only what arrived plus what left while
 * still referenced. Whenever anything looks wrong, or a list is not sorted, or a type changed in
 * more than `MAX_QUICK_CHANGES` resources, or there is no earlier state, it runs the full check
 * (which rebuilds the state in the same walks), so its problems are always exactly the full
 * check's; a failing check forgets its state. At 10,000 routes the full check costs ~10 ms.
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
    this.state = problems.length === 0 && sortedLists(compiled) ? state : undefined;
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
    this.state = undefined;
    const apply = (names: Set<string>, change: ListChange): void => {
      for (const { name } of change.removed) names.delete(name);
      for (const { name } of change.added) names.add(name);
    };
    apply(state.clusterNames, clusters);
    apply(state.endpointNames, endpoints);
    apply(state.routeConfigNames, routes);
    for (const { message } of routes.removed) {
      everyClusterReference(message, (_, cluster) => {
        count(state.clusterUses, cluster, -1);
        return true;
      });
    }
    for (const { message } of routes.added) {
      const known = everyClusterReference(message, (_, cluster) => {
        if (!state.clusterNames.has(cluster)) return false;
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
      if (target === undefined || !state.routeConfigNames.has(target)) return undefined;
      count(state.routeConfigUses, target, 1);
    }
    // Whatever left must no longer be needed.
    for (const { name } of clusters.removed)
      if (!state.clusterNames.has(name) && state.clusterUses.has(name)) return undefined;
    for (const { name } of routes.removed)
      if (!state.routeConfigNames.has(name) && state.routeConfigUses.has(name)) return undefined;
    for (const { name, message } of clusters.added)
      if (message.type === 'EDS' && !state.endpointNames.has(name)) return undefined;
    for (const { name } of endpoints.removed) {
      if (state.endpointNames.has(name)) continue;
      const cluster = compiled[CLUSTER_TYPE].find((resource) => resource.name === name);
      if (cluster?.message.type === 'EDS') return undefined;
    }
    if (listenerProblems(compiled, (name) => state.routeConfigNames.has(name)).length > 0) return undefined;
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
  ].every((type) => isSortedByName(compiled[type as keyof CompiledResources]));
}

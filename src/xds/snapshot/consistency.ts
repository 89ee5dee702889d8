import type { Problem } from '../../shared/errors.js';
import type { ProtoObject } from '../../proto/codec.js';
import type { CompiledResource, CompiledResources } from '../../proto/compiled.js';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  LISTENER_TYPE,
  RESOURCE_TYPES,
  ROUTE_CONFIGURATION_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
  SHORT_NAMES,
  type ResourceType,
} from '../../proto/type-urls.js';

/**
 * What one clean check hands the next: the compiled resources it found consistent. Compile gives
 * back the identical resource for unchanged content, so the next check reads only what changed.
 */
export interface ConsistencyMemo {
  readonly compiled: CompiledResources;
  /** Whether that check found no problem (the memo of one that did is not used). */
  readonly clean: boolean;
}

/**
 * Checks that compiled resources are self-consistent before they are published: no two resources
 * of a type share a name, every EDS cluster has its ClusterLoadAssignment, every route names an
 * existing cluster, every scope names an existing route configuration, and every RDS name a
 * listener uses exists. A snapshot that fails is never published (Envoy would blackhole traffic,
 * or wait forever for a missing resource), and every problem is reported. Pure, and complete on
 * every call: a few name sets and one lookup per reference.
 */
export function checkConsistency(compiled: CompiledResources): Problem[] {
  return checkConsistencyWithMemo(compiled).problems;
}

/**
 * `checkConsistency`, given the previous clean check's memo: when every type holds the same names
 * in the same places as the resources it checked, the resources it checked are consistent again
 * (each reference points at a name that is still there), so only the resources replaced since are
 * checked. Otherwise, and whenever that finds a problem, the full check runs, so the problems are
 * always those (and in the order) of `checkConsistency`.
 */
export function checkConsistencyWithMemo(
  compiled: CompiledResources,
  previous?: ConsistencyMemo,
): { readonly problems: Problem[]; readonly memo: ConsistencyMemo } {
  const replaced = previous?.clean === true ? replacedSince(previous.compiled, compiled) : undefined;
  if (replaced !== undefined && checkReplaced(compiled, replaced))
    return { problems: [], memo: { compiled, clean: true } };
  const problems = checkAll(compiled);
  return { problems, memo: { compiled, clean: problems.length === 0 } };
}

/**
 * Per type, the resources of `now` that are not the identical objects of `before`, when each
 * type's list holds the same names in the same places; undefined when one does not.
 */
function replacedSince(
  before: CompiledResources,
  now: CompiledResources,
): Record<ResourceType, CompiledResource[]> | undefined {
  const replaced = {} as Record<ResourceType, CompiledResource[]>;
  for (const type of RESOURCE_TYPES) {
    const then = before[type];
    const list: readonly CompiledResource[] = now[type];
    if (then.length !== list.length) return undefined;
    const changed: CompiledResource[] = [];
    for (let index = 0; index < list.length; index += 1) {
      const resource = list[index] as CompiledResource;
      const earlier = then[index] as CompiledResource;
      if (resource === earlier) continue;
      if (resource.name !== earlier.name) return undefined;
      changed.push(resource);
    }
    replaced[type] = changed;
  }
  return replaced;
}

/**
 * Whether the replaced resources are consistent with the names of `compiled` (the same names, in
 * the same places, as a set found consistent before, so those still hold and no name repeats).
 * A name is looked up by binary search in its list (compile's lists are in name order); a list out
 * of order can only make a present name look absent, which sends the caller to the full check.
 */
function checkReplaced(
  compiled: CompiledResources,
  replaced: Record<ResourceType, CompiledResource[]>,
): boolean {
  const endpoints = compiled[CLUSTER_LOAD_ASSIGNMENT_TYPE];
  const clusters = compiled[CLUSTER_TYPE];
  const routeConfigs = compiled[ROUTE_CONFIGURATION_TYPE];
  for (const { name, message } of replaced[CLUSTER_TYPE] as CompiledResource<typeof CLUSTER_TYPE>[])
    if (message.type === 'EDS' && !listed(endpoints, name)) return false;
  for (const { message } of replaced[ROUTE_CONFIGURATION_TYPE] as CompiledResource<
    typeof ROUTE_CONFIGURATION_TYPE
  >[]) {
    const targets = clustersRoutedTo(message);
    for (let index = 1; index < targets.length; index += 2)
      if (!listed(clusters, targets[index] as string)) return false;
  }
  for (const { message } of replaced[SCOPED_ROUTE_CONFIGURATION_TYPE] as CompiledResource<
    typeof SCOPED_ROUTE_CONFIGURATION_TYPE
  >[]) {
    const target = message.route_configuration_name;
    if (typeof target !== 'string' || !listed(routeConfigs, target)) return false;
  }
  for (const { message } of replaced[LISTENER_TYPE])
    for (const routeConfig of rdsNamesOf(message)) if (!listed(routeConfigs, routeConfig)) return false;
  return true;
}

/** Whether a list in name order holds `name` (binary search; see checkReplaced). */
function listed(list: readonly CompiledResource[], name: string): boolean {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((list[middle] as CompiledResource).name < name) low = middle + 1;
    else high = middle;
  }
  return list[low]?.name === name;
}

/** The full check (see `checkConsistency`). */
function checkAll(compiled: CompiledResources): Problem[] {
  const problems: Problem[] = [];
  for (const type of RESOURCE_TYPES) problems.push(...duplicateNames(SHORT_NAMES[type], compiled[type]));
  const clusterNames = namesOf(compiled[CLUSTER_TYPE]);
  const endpointNames = namesOf(compiled[CLUSTER_LOAD_ASSIGNMENT_TYPE]);
  const routeConfigNames = namesOf(compiled[ROUTE_CONFIGURATION_TYPE]);
  for (const { name, message } of compiled[CLUSTER_TYPE]) {
    if (message.type === 'EDS' && !endpointNames.has(name))
      problems.push({ path: `clusters.${name}`, message: 'EDS cluster has no ClusterLoadAssignment' });
  }
  for (const { message } of compiled[ROUTE_CONFIGURATION_TYPE]) {
    const targets = clustersRoutedTo(message);
    for (let index = 0; index < targets.length; index += 2) {
      const cluster = targets[index + 1] as string;
      if (!clusterNames.has(cluster))
        problems.push({
          path: `routes.${targets[index] as string}`,
          message: `route points at unknown cluster ${cluster}`,
        });
    }
  }
  // Per-host scopes name their RouteConfiguration (route-configuration.ts); Envoy would wait on a
  // missing one forever, leaving the host unrouted.
  for (const { name, message } of compiled[SCOPED_ROUTE_CONFIGURATION_TYPE]) {
    const target = message.route_configuration_name;
    if (typeof target !== 'string' || !routeConfigNames.has(target))
      problems.push({
        path: `scopes.${name}`,
        message: `scope references unknown route configuration ${typeof target === 'string' ? target : '(none)'}`,
      });
  }
  for (const { name, message } of compiled[LISTENER_TYPE]) {
    for (const routeConfig of rdsNamesOf(message)) {
      if (!routeConfigNames.has(routeConfig))
        problems.push({
          path: `listeners.${name}`,
          message: `listener references unknown route configuration ${routeConfig}`,
        });
    }
  }
  return problems;
}

/** A route configuration's forwarding routes as flat `[virtual host name, cluster]` pairs. */
function clustersRoutedTo(message: CompiledResource<typeof ROUTE_CONFIGURATION_TYPE>['message']): string[] {
  const targets: string[] = [];
  for (const vhost of arrayOf(message.virtual_hosts)) {
    for (const route of arrayOf(vhost.routes)) {
      const cluster = objectOf(route.route).cluster;
      if (typeof cluster === 'string') targets.push(String(vhost.name), cluster);
    }
  }
  return targets;
}

function namesOf(resources: readonly CompiledResource[]): Set<string> {
  return new Set(resources.map((resource) => resource.name));
}

function duplicateNames(kind: string, resources: readonly CompiledResource[]): Problem[] {
  const seen = new Set<string>();
  const problems: Problem[] = [];
  for (const { name } of resources) {
    if (seen.has(name)) problems.push({ path: `${kind}.${name}`, message: `two ${kind} named ${name}` });
    seen.add(name);
  }
  return problems;
}

/**
 * The RDS names a listener fetches: every `rds.route_config_name` in it (its HTTP connection
 * managers' `rds` settings, wherever a filter chain holds them).
 */
function rdsNamesOf(value: unknown, names: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) rdsNamesOf(item, names);
  else if (value !== null && typeof value === 'object') {
    for (const [key, member] of Object.entries(value)) {
      const name = key === 'rds' ? objectOf(member).route_config_name : undefined;
      if (typeof name === 'string') names.push(name);
      else rdsNamesOf(member, names);
    }
  }
  return names;
}

/** `value` as a list of messages (none when it is not a list). */
function arrayOf(value: unknown): ProtoObject[] {
  return Array.isArray(value) ? (value as ProtoObject[]) : [];
}

/** `value` as a message (an empty one when it is not an object). */
function objectOf(value: unknown): ProtoObject {
  return value !== null && typeof value === 'object' ? (value as ProtoObject) : {};
}

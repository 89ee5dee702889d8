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
} from '../../proto/type-urls.js';

/**
 * What one check hands the next: the references each route configuration and listener makes, by
 * the compiled resource they were read from (compile gives back the identical resource for
 * unchanged content), so a reload reads only the resources it changed. One check's entries only.
 */
export interface ConsistencyMemo {
  /** Each route configuration's routes as `[virtual host, cluster]` pairs, flat. */
  readonly routeTargets: ReadonlyMap<CompiledResource, readonly string[]>;
  /** Each listener's RDS names. */
  readonly rdsNames: ReadonlyMap<CompiledResource, readonly string[]>;
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
 * `checkConsistency`, taking the references of resources `previous` already read from it instead
 * of walking their messages again (every reference is still looked up: the check stays complete).
 */
export function checkConsistencyWithMemo(
  compiled: CompiledResources,
  previous?: ConsistencyMemo,
): { readonly problems: Problem[]; readonly memo: ConsistencyMemo } {
  const problems: Problem[] = [];
  for (const type of RESOURCE_TYPES) problems.push(...duplicateNames(SHORT_NAMES[type], compiled[type]));
  const clusterNames = namesOf(compiled[CLUSTER_TYPE]);
  const endpointNames = namesOf(compiled[CLUSTER_LOAD_ASSIGNMENT_TYPE]);
  const routeConfigNames = namesOf(compiled[ROUTE_CONFIGURATION_TYPE]);
  for (const { name, message } of compiled[CLUSTER_TYPE]) {
    if (message.type === 'EDS' && !endpointNames.has(name))
      problems.push({ path: `clusters.${name}`, message: 'EDS cluster has no ClusterLoadAssignment' });
  }
  const routeTargets = new Map<CompiledResource, readonly string[]>();
  for (const resource of compiled[ROUTE_CONFIGURATION_TYPE]) {
    const targets = previous?.routeTargets.get(resource) ?? clustersRoutedTo(resource.message);
    routeTargets.set(resource, targets);
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
  const rdsNames = new Map<CompiledResource, readonly string[]>();
  for (const resource of compiled[LISTENER_TYPE]) {
    const names = previous?.rdsNames.get(resource) ?? rdsNamesOf(resource.message);
    rdsNames.set(resource, names);
    for (const routeConfig of names) {
      if (!routeConfigNames.has(routeConfig))
        problems.push({
          path: `listeners.${resource.name}`,
          message: `listener references unknown route configuration ${routeConfig}`,
        });
    }
  }
  return { problems, memo: { routeTargets, rdsNames } };
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

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
 * Checks that compiled resources are self-consistent before they are published: no two resources
 * of a type share a name, every EDS cluster has its ClusterLoadAssignment, every route names an
 * existing cluster, every scope names an existing route configuration, and every RDS name a
 * listener uses exists. A snapshot that fails is never published (Envoy would blackhole traffic,
 * or wait forever for a missing resource), and every problem is reported. Pure, and complete on
 * every call: a few name sets and one lookup per reference.
 */
export function checkConsistency(compiled: CompiledResources): Problem[] {
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
    for (const vhost of arrayOf(message.virtual_hosts)) {
      for (const route of arrayOf(vhost.routes)) {
        const cluster = objectOf(route.route).cluster;
        if (typeof cluster === 'string' && !clusterNames.has(cluster))
          problems.push({
            path: `routes.${String(vhost.name)}`,
            message: `route points at unknown cluster ${cluster}`,
          });
      }
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

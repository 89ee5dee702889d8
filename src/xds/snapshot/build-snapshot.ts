import { fullHash, shortHash } from '../../shared/hash.js';
import type { Problem } from '../../shared/errors.js';
import { encodeMessage } from '../codec/codec.js';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  LISTENER_TYPE,
  RESOURCE_TYPES,
  ROUTE_CONFIGURATION_TYPE,
  type ResourceType,
} from '../codec/type-urls.js';
import type { CompiledResources } from '../compile/compile.js';
import type { EncodedResource, Snapshot } from './types.js';

/**
 * Encodes compiled resources into an immutable Snapshot: each resource's version is a hash of its
 * bytes, each type's version a hash over its resources' names and versions, the snapshot's over
 * the types. A cache of the previous snapshot's encodings lets a one-route change re-encode only
 * what changed (keyed by the resource's canonical content).
 */
export function buildSnapshot(compiled: CompiledResources): Snapshot {
  const resources = {} as Record<ResourceType, Map<string, EncodedResource>>;
  const typeVersions = {} as Record<ResourceType, string>;
  for (const type of RESOURCE_TYPES) {
    const byName = new Map<string, EncodedResource>();
    const versionInput: string[] = [];
    for (const { name, message } of compiled[type]) {
      const bytes = encodeMessage(type, message);
      const version = shortHash(bytes);
      byName.set(name, { name, version, bytes });
      versionInput.push(`${name}=${version}`);
    }
    resources[type] = byName;
    typeVersions[type] = shortHash(versionInput.join('\n'));
  }
  const version = fullHash(RESOURCE_TYPES.map((type) => typeVersions[type]).join('.')).slice(0, 16);
  return { version, typeVersions, resources };
}

/**
 * Checks that a snapshot is self-consistent before it is published: every EDS cluster has its
 * endpoints, every route names an existing cluster, and the listener's RDS name exists. A snapshot
 * that fails is never published (Envoy would blackhole traffic), and the problems are reported.
 */
export function checkConsistency(compiled: CompiledResources): Problem[] {
  const problems: Problem[] = [];
  const clusterNames = new Set(compiled[CLUSTER_TYPE].map((resource) => resource.name));
  const endpointNames = new Set(compiled[CLUSTER_LOAD_ASSIGNMENT_TYPE].map((resource) => resource.name));
  const routeConfigNames = new Set(compiled[ROUTE_CONFIGURATION_TYPE].map((resource) => resource.name));
  for (const { name, message } of compiled[CLUSTER_TYPE]) {
    if (message.type === 'EDS' && !endpointNames.has(name)) {
      problems.push({ path: `clusters.${name}`, message: 'EDS cluster has no ClusterLoadAssignment' });
    }
  }
  for (const { message } of compiled[ROUTE_CONFIGURATION_TYPE]) {
    for (const vhost of (message.virtual_hosts as { name: string; routes: { route?: { cluster?: string } }[] }[]) ?? []) {
      for (const route of vhost.routes) {
        const cluster = route.route?.cluster;
        if (cluster !== undefined && !clusterNames.has(cluster)) {
          problems.push({ path: `routes.${vhost.name}`, message: `route points at unknown cluster ${cluster}` });
        }
      }
    }
  }
  for (const { name, message } of compiled[LISTENER_TYPE]) {
    const text = JSON.stringify(message);
    for (const match of text.matchAll(/"route_config_name":"([^"]+)"/g)) {
      if (!routeConfigNames.has(match[1] as string)) {
        problems.push({ path: `listeners.${name}`, message: `listener references unknown route configuration ${match[1]}` });
      }
    }
  }
  return problems;
}

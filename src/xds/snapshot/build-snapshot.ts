import { hash } from 'node:crypto';
import { fullHash, shortHash } from '../../shared/hash.js';
import type { Problem } from '../../shared/errors.js';
import { encodeMessages } from '../codec/codec.js';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  LISTENER_TYPE,
  RESOURCE_TYPES,
  ROUTE_CONFIGURATION_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
  type ResourceType,
} from '../codec/type-urls.js';
import type { CompiledResource, CompiledResources } from '../compile/compile.js';
import type { EncodedResource, Snapshot } from './types.js';

/** [virtual host, cluster] pairs a RouteConfiguration message points at, by the message object. */
const referencesByMessage = new WeakMap<object, (readonly [string, string])[]>();

function clusterReferences(message: object): readonly (readonly [string, string])[] {
  let references = referencesByMessage.get(message);
  if (references === undefined) {
    references = [];
    for (const vhost of ((message as { virtual_hosts?: unknown }).virtual_hosts as {
      name: string;
      routes: { route?: { cluster?: string } }[];
    }[]) ?? []) {
      for (const route of vhost.routes) {
        const cluster = route.route?.cluster;
        if (cluster !== undefined) references.push([vhost.name, cluster]);
      }
    }
    referencesByMessage.set(message, references);
  }
  return references;
}

/** Encoded bytes and version of a compiled message, by the message object. */
const encodedMessages = new WeakMap<object, EncodedEntry>();

/** A message's encoding, and the snapshot entry and version line made from it (first use). */
interface EncodedEntry {
  readonly bytes: Uint8Array;
  readonly version: string;
  resource?: EncodedResource;
  line?: string;
}

/**
 * Encodes compiled resources into an immutable Snapshot: each resource's version is a hash of its
 * bytes, each type's version a hash over its resources' names and versions, the snapshot's over
 * the types. A message object encoded by an earlier build is not encoded again (compile hands
 * unchanged routes the same message objects), so a reload encodes only what changed; the rest are
 * batch-encoded per type (`encodeMessages`).
 */
export function buildSnapshot(compiled: CompiledResources): Snapshot {
  const resources = {} as Record<ResourceType, Map<string, EncodedResource>>;
  const typeVersions = {} as Record<ResourceType, string>;
  for (const type of RESOURCE_TYPES) {
    const list = compiled[type];
    const entries = list.map((resource) => encodedMessages.get(resource.message));
    const fresh: number[] = [];
    entries.forEach((entry, index) => {
      if (entry === undefined) fresh.push(index);
    });
    if (fresh.length > 0) {
      const encoded = encodeMessages(
        type,
        fresh.map((index) => (list[index] as CompiledResource).message),
      );
      fresh.forEach((index, at) => {
        const bytes = encoded[at] as Uint8Array;
        const entry: EncodedEntry = { bytes, version: resourceVersion(bytes) };
        encodedMessages.set((list[index] as CompiledResource).message, entry);
        entries[index] = entry;
      });
    }
    const byName = new Map<string, EncodedResource>();
    const versionParts: string[] = new Array<string>(list.length);
    for (let i = 0; i < list.length; i++) {
      const { name } = list[i] as CompiledResource;
      const entry = entries[i] as EncodedEntry;
      // The same EncodedResource object as the last build's (and its `name=version` line), so
      // an unchanged resource costs no allocation here and is recognised downstream by identity.
      if (entry.resource === undefined || entry.resource.name !== name) {
        entry.resource = { name, version: entry.version, bytes: entry.bytes };
        entry.line = `${name}=${entry.version}`;
      }
      byName.set(name, entry.resource);
      versionParts[i] = entry.line as string;
    }
    resources[type] = byName;
    typeVersions[type] = shortHash(versionParts.join('\n'));
  }
  const version = fullHash(RESOURCE_TYPES.map((type) => typeVersions[type]).join('.')).slice(0, 16);
  return { version, typeVersions, resources };
}

/**
 * `shortHash(bytes)` (the first 16 hex characters of SHA-256) through Node's one-shot `hash`, which
 * skips creating a Hash object per call: at 20,000 resources per snapshot that object was a
 * visible share of the build.
 */
function resourceVersion(bytes: Uint8Array): string {
  return hash('sha256', bytes, 'hex').slice(0, 16);
}

/**
 * Checks that a snapshot is self-consistent before it is published: every EDS cluster has its
 * endpoints, every route names an existing cluster, every scope names an existing route
 * configuration, and the listener's RDS name exists. A snapshot that
 * fails is never published (Envoy would blackhole traffic), and the problems are reported.
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
    for (const [vhost, cluster] of clusterReferences(message)) {
      if (!clusterNames.has(cluster)) {
        problems.push({ path: `routes.${vhost}`, message: `route points at unknown cluster ${cluster}` });
      }
    }
  }
  // Per-host scopes name their RouteConfiguration (route-configuration.ts); Envoy would wait on a
  // missing one forever, leaving the host unrouted.
  for (const { name, message } of compiled[SCOPED_ROUTE_CONFIGURATION_TYPE]) {
    const target = message.route_configuration_name as string | undefined;
    if (target === undefined || !routeConfigNames.has(target)) {
      problems.push({
        path: `scopes.${name}`,
        message: `scope references unknown route configuration ${target ?? '(none)'}`,
      });
    }
  }
  for (const { name, message } of compiled[LISTENER_TYPE]) {
    const text = JSON.stringify(message);
    for (const match of text.matchAll(/"route_config_name":"([^"]+)"/g)) {
      if (!routeConfigNames.has(match[1] as string)) {
        problems.push({
          path: `listeners.${name}`,
          message: `listener references unknown route configuration ${match[1]}`,
        });
      }
    }
  }
  return problems;
}

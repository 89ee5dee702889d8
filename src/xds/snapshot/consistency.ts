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
 * What one clean check hands the next: per type, what it read of each resource it found
 * consistent (`Checked`), in the resources' order. It holds no compiled message, so the messages
 * of a build are garbage once it is encoded; a resource with the same content key as the one in
 * the same place is not read again (equal keys, equal messages: see `CompiledResource.contentKey`).
 */
export interface ConsistencyMemo {
  readonly checked: Readonly<Record<ResourceType, readonly Checked[]>>;
  /** Whether that check found no problem (the memo of one that did is not used). */
  readonly clean: boolean;
}

/**
 * What the check reads of one resource: its name and content key, and the names it refers to.
 * `eds` is a Cluster's (whether it waits for a ClusterLoadAssignment); `names` is a
 * RouteConfiguration's `[virtual host, cluster]` pairs (flat), a scope's route configuration (none
 * when it names none), a listener's RDS names, and empty for the other types.
 */
export interface Checked {
  readonly name: string;
  readonly contentKey: string | undefined;
  readonly eds: boolean;
  readonly names: readonly string[];
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
 * (each reference points at a name that is still there), so only the resources replaced since
 * (another content key, or none) are checked. Otherwise, and whenever that finds a problem, the
 * full check runs, so the problems are always those (and in the order) of `checkConsistency`;
 * it too reads only the messages whose content key the memo does not hold.
 */
export function checkConsistencyWithMemo(
  compiled: CompiledResources,
  previous?: ConsistencyMemo,
): { readonly problems: Problem[]; readonly memo: ConsistencyMemo } {
  const usable = previous?.clean === true ? previous : undefined;
  const replaced = usable === undefined ? undefined : replacedSince(usable.checked, compiled);
  if (replaced !== undefined && checkReplaced(compiled, replaced.changed))
    return { problems: [], memo: { checked: replaced.checked, clean: true } };
  const checked = readAll(compiled, previous?.checked);
  const problems = checkAll(checked);
  return { problems, memo: { checked, clean: problems.length === 0 } };
}

/**
 * Per type, what the check reads of each resource of `now`, and the resources whose content key
 * differs from the one `before` holds in its place, when each type's list holds the same names in
 * the same places; undefined when one does not.
 */
function replacedSince(
  before: Readonly<Record<ResourceType, readonly Checked[]>>,
  now: CompiledResources,
):
  | {
      readonly checked: Record<ResourceType, Checked[]>;
      readonly changed: Record<ResourceType, Checked[]>;
    }
  | undefined {
  const checked = {} as Record<ResourceType, Checked[]>;
  const changed = {} as Record<ResourceType, Checked[]>;
  for (const type of RESOURCE_TYPES) {
    const then = before[type];
    const list: readonly CompiledResource[] = now[type];
    if (then.length !== list.length) return undefined;
    const all: Checked[] = [];
    const fresh: Checked[] = [];
    for (let index = 0; index < list.length; index += 1) {
      const resource = list[index] as CompiledResource;
      const earlier = then[index] as Checked;
      if (resource.name !== earlier.name) return undefined;
      if (resource.contentKey !== undefined && resource.contentKey === earlier.contentKey) all.push(earlier);
      else {
        const read = readOne(type, resource);
        all.push(read);
        fresh.push(read);
      }
    }
    checked[type] = all;
    changed[type] = fresh;
  }
  return { checked, changed };
}

/** What the check reads of every resource: the memo's entry for a content key it holds, else read. */
function readAll(
  compiled: CompiledResources,
  previous: Readonly<Record<ResourceType, readonly Checked[]>> | undefined,
): Record<ResourceType, Checked[]> {
  const checked = {} as Record<ResourceType, Checked[]>;
  for (const type of RESOURCE_TYPES) {
    const known = new Map<string, Checked>();
    for (const entry of previous?.[type] ?? [])
      if (entry.contentKey !== undefined) known.set(entry.contentKey, entry);
    checked[type] = (compiled[type] as readonly CompiledResource[]).map((resource) => {
      const earlier = resource.contentKey === undefined ? undefined : known.get(resource.contentKey);
      return earlier?.name === resource.name ? earlier : readOne(type, resource);
    });
  }
  return checked;
}

/** The names of a resource that refers to none (one frozen list for all of them). */
const NONE: readonly string[] = Object.freeze([]);

/** What the check reads of one resource of `type` (see `Checked`). */
function readOne(type: ResourceType, resource: CompiledResource): Checked {
  const { name, contentKey } = resource;
  const message = resource.message as ProtoObject;
  let eds = false;
  let names: readonly string[] = NONE;
  if (type === CLUSTER_TYPE) eds = message.type === 'EDS';
  else if (type === ROUTE_CONFIGURATION_TYPE)
    names = clustersRoutedTo(message as CompiledResource<typeof ROUTE_CONFIGURATION_TYPE>['message']);
  else if (type === SCOPED_ROUTE_CONFIGURATION_TYPE) {
    const target = message.route_configuration_name;
    names = typeof target === 'string' ? [target] : NONE;
  } else if (type === LISTENER_TYPE) names = rdsNamesOf(message);
  return { name, contentKey, eds, names };
}

/**
 * Whether the replaced resources are consistent with the names of `compiled` (the same names, in
 * the same places, as a set found consistent before, so those still hold and no name repeats).
 * A name is looked up by binary search in its list (compile's lists are in name order); a list out
 * of order can only make a present name look absent, which sends the caller to the full check.
 */
function checkReplaced(compiled: CompiledResources, replaced: Record<ResourceType, Checked[]>): boolean {
  const endpoints = compiled[CLUSTER_LOAD_ASSIGNMENT_TYPE];
  const clusters = compiled[CLUSTER_TYPE];
  const routeConfigs = compiled[ROUTE_CONFIGURATION_TYPE];
  for (const { name, eds } of replaced[CLUSTER_TYPE]) if (eds && !listed(endpoints, name)) return false;
  for (const { names: targets } of replaced[ROUTE_CONFIGURATION_TYPE]) {
    for (let index = 1; index < targets.length; index += 2)
      if (!listed(clusters, targets[index] as string)) return false;
  }
  for (const { names } of replaced[SCOPED_ROUTE_CONFIGURATION_TYPE]) {
    const target = names[0];
    if (target === undefined || !listed(routeConfigs, target)) return false;
  }
  for (const { names } of replaced[LISTENER_TYPE])
    for (const routeConfig of names) if (!listed(routeConfigs, routeConfig)) return false;
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

/** The full check (see `checkConsistency`), over what was read of each resource. */
function checkAll(checked: Readonly<Record<ResourceType, readonly Checked[]>>): Problem[] {
  const problems: Problem[] = [];
  for (const type of RESOURCE_TYPES) problems.push(...duplicateNames(SHORT_NAMES[type], checked[type]));
  const clusterNames = namesOf(checked[CLUSTER_TYPE]);
  const endpointNames = namesOf(checked[CLUSTER_LOAD_ASSIGNMENT_TYPE]);
  const routeConfigNames = namesOf(checked[ROUTE_CONFIGURATION_TYPE]);
  for (const { name, eds } of checked[CLUSTER_TYPE]) {
    if (eds && !endpointNames.has(name))
      problems.push({ path: `clusters.${name}`, message: 'EDS cluster has no ClusterLoadAssignment' });
  }
  for (const { names: targets } of checked[ROUTE_CONFIGURATION_TYPE]) {
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
  for (const { name, names } of checked[SCOPED_ROUTE_CONFIGURATION_TYPE]) {
    const target = names[0];
    if (target === undefined || !routeConfigNames.has(target))
      problems.push({
        path: `scopes.${name}`,
        message: `scope references unknown route configuration ${target ?? '(none)'}`,
      });
  }
  for (const { name, names } of checked[LISTENER_TYPE]) {
    for (const routeConfig of names) {
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

function namesOf(resources: readonly { readonly name: string }[]): Set<string> {
  return new Set(resources.map((resource) => resource.name));
}

function duplicateNames(kind: string, resources: readonly { readonly name: string }[]): Problem[] {
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

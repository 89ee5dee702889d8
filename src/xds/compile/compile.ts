import type { IR } from '../../ir/types.js';
import type { ProtoObject } from '../codec/codec.js';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  LISTENER_TYPE,
  ROUTE_CONFIGURATION_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
  type ResourceType,
} from '../codec/type-urls.js';
import { compileCluster } from './cluster.js';
import { compileEndpoints } from './endpoints.js';
import { compileListener } from './listener.js';
import { authorizeCluster } from './ext-authz.js';
import { AUTHORIZE_CLUSTER } from '../../contract/names.js';
import { compileRouting } from './route-configuration.js';
import { inMemoryOrder } from './memory-order.js';
import type { IRCluster } from '../../ir/types.js';
import {
  EDS_FACTS,
  NO_FACTS,
  type LazyBuilder,
  type LazyResource,
  type ResourceFacts,
} from './lazy-resource.js';

/** The previous compile's cluster records, in IR order: what the next compile reuses by identity. */
let previousClusters: readonly LazyResource[] = [];

/** A compiled resource that holds its message (the listener, the authorize cluster, the single table). */
export interface EagerResource {
  readonly name: string;
  readonly message: ProtoObject;
}

/**
 * A compiled resource before encoding: its name and its proto3-JSON-shaped message, held
 * (`EagerResource`) or built when read (`LazyResource`, most of what compile returns). Read a
 * message with `messageOf(type, resource)`, once per use.
 */
export type CompiledResource = EagerResource | LazyResource;

/**
 * How a route's cluster record builds its messages: the Cluster, and the ClusterLoadAssignment of
 * an EDS cluster (the same record is listed under both types, with the same name). Its facts are
 * set when the record is made, from the IR cluster compile reads anyway.
 */
const ROUTE_CLUSTER: LazyBuilder = Object.freeze({
  message(type: ResourceType, record: LazyResource): ProtoObject {
    const cluster = record.source as IRCluster;
    return type === CLUSTER_TYPE ? compileCluster(cluster) : compileEndpoints(cluster);
  },
  keepsFactsOf(): boolean {
    return false;
  },
  derivedFacts(type: ResourceType, record: LazyResource): ResourceFacts {
    return type === CLUSTER_TYPE ? (record.facts as ResourceFacts) : NO_FACTS;
  },
});

/** A route's cluster record (see LazyResource): an object literal, so V8 can pretenure it. */
function clusterRecord(cluster: IRCluster): LazyResource {
  return {
    name: cluster.name,
    lazy: ROUTE_CLUSTER,
    source: cluster,
    context: undefined,
    facts: cluster.discovery === 'EDS' ? EDS_FACTS : NO_FACTS,
  };
}

/** Whether a cluster record is also listed as a ClusterLoadAssignment (an EDS cluster). */
function hasEndpoints(record: LazyResource): boolean {
  return record.facts === EDS_FACTS;
}

/** How a compile may use the previous one. */
export interface CompileOptions {
  /**
   * False when no IR object can be one the previous compile saw (translate reused no route: see
   * `TranslateResult.reusedRoutes`), so looking for them would only cost time: each lookup reads
   * an old object and its name beside the new one, ~9 ms of cache misses at 10,000 routes. The
   * result is the same either way (reuse needs the very same objects). Default true.
   */
  readonly reuse?: boolean;
  /**
   * `ir.clusters` indexes in the order the clusters sit in memory (see
   * `TranslateResult.clusterBuildOrder`). With it, a compile that reuses nothing makes the cluster
   * resources in that order, and tells the snapshot to encode clusters and endpoints in it
   * (`CompiledBuild.encodeOrder`): the IR clusters, their endpoints and the settings they point at
   * are then read in the order they were written, not in the random order of their hashed names.
   */
  readonly clusterOrder?: Int32Array | undefined;
  /**
   * `ir.virtualHosts` indexes in the order the hosts sit in memory (see
   * `TranslateResult.hostBuildOrder`). With it, a compile that reuses nothing makes the host
   * records in that order, and under per-host delivery tells the snapshot to encode the route
   * configurations and scopes in it, as `clusterOrder` does for clusters.
   */
  readonly hostOrder?: Int32Array | undefined;
}

/**
 * Per resource type, the indexes into its compiled list in the order its resources are best
 * encoded (their memory order); a type without one is encoded in list order.
 */
export type EncodeOrder = Partial<Record<ResourceType, Int32Array>>;

/** What compile hands the snapshot: the resources, and the order to encode them in. */
export interface CompiledBuild {
  readonly resources: CompiledResources;
  readonly encodeOrder: EncodeOrder;
}

/** Every resource type's compiled resources, sorted by name. */
export type CompiledResources = Readonly<Record<ResourceType, readonly CompiledResource[]>>;

/** The cluster and endpoints lists compile hands on, filled by `compileClusters`. */
interface ClusterLists {
  readonly clusters: CompiledResource[];
  readonly endpoints: CompiledResource[];
  /** Each IR cluster's place in `endpoints` (-1: none), for the encode order; only with a memory order. */
  readonly endpointsAt: Int32Array | undefined;
}

/**
 * Each IR cluster's record, reusing the previous compile's for the very same IR cluster (translate
 * hands an unchanged route's cluster over as the same object), appended to `lists` in IR order:
 * every record to the clusters, an EDS cluster's to the endpoints as well. Found by one merge walk
 * beside the previous list, both sorted by name as translate emits them; a list out of order only
 * means less reuse, never a wrong one, since reuse needs the same object. The walk also fills the
 * lists, so a reload reads each of 10,000 records once.
 */
function compileClusters(
  clusters: readonly IRCluster[],
  reuse: boolean,
  order: Int32Array | undefined,
  lists: ClusterLists,
): void {
  if (!reuse && order !== undefined && order.length === clusters.length) {
    // Nothing to reuse: made in memory order, each put in its place in the sorted list.
    const made = inMemoryOrder(clusters, order, clusterRecord);
    for (let i = 0; i < made.length; i++) addCluster(lists, made[i] as LazyResource, i);
    previousClusters = made;
    return;
  }
  const out = new Array<LazyResource>(clusters.length);
  const before = reuse ? previousClusters : [];
  let j = 0;
  for (let i = 0; i < clusters.length; i++) {
    const cluster = clusters[i] as IRCluster;
    if (before[j]?.source !== cluster)
      while (j < before.length && (before[j] as LazyResource).name < cluster.name) j++;
    const old = before[j];
    let record: LazyResource;
    if (old !== undefined && old.source === cluster) {
      record = old;
      j++;
    } else {
      record = clusterRecord(cluster);
    }
    out[i] = record;
    addCluster(lists, record, i);
  }
  previousClusters = out;
}

/** Appends IR cluster `index`'s record to the clusters and, for an EDS cluster, the endpoints. */
function addCluster(lists: ClusterLists, record: LazyResource, index: number): void {
  lists.clusters.push(record);
  const eds = hasEndpoints(record);
  if (lists.endpointsAt !== undefined) lists.endpointsAt[index] = eds ? lists.endpoints.length : -1;
  if (eds) lists.endpoints.push(record);
}

/**
 * IR -> Envoy resources. Pure: no clock, randomness, files or network, so the same IR always
 * gives the same resources (and, after encoding, the same bytes and versions). Results for
 * unchanged IR objects are remembered (same input objects, same output objects), which changes
 * nothing but the time a reload takes. Callers must treat the output as immutable. Per-route
 * resources are lazy (`LazyResource`): their messages are built when read, so the snapshot builds
 * and encodes them in small batches and nothing keeps 40,000 message trees at 10,000 routes.
 * `options.reuse: false` skips looking for unchanged objects (see CompileOptions).
 */
export function compile(ir: IR, options: CompileOptions = {}): CompiledResources {
  return compileBuild(ir, options).resources;
}

/** `compile`, with the order the snapshot should encode the resources in (see CompileOptions). */
export function compileBuild(ir: IR, options: CompileOptions = {}): CompiledBuild {
  const reuse = options.reuse ?? true;
  const routing = compileRouting(ir, reuse, options.hostOrder);
  const scoping = routing.scoping;
  // Sorted by name: `portcullis-*` before every `route-*`.
  const clusters: CompiledResource[] =
    ir.internal === undefined ? [] : [{ name: AUTHORIZE_CLUSTER, message: authorizeCluster(ir.internal) }];
  const first = clusters.length;
  const endpoints: CompiledResource[] = [];
  const endpointsAt = options.clusterOrder === undefined ? undefined : new Int32Array(ir.clusters.length);
  compileClusters(ir.clusters, reuse, options.clusterOrder, { clusters, endpoints, endpointsAt });
  const resources: CompiledResources = {
    [CLUSTER_TYPE]: clusters,
    [CLUSTER_LOAD_ASSIGNMENT_TYPE]: endpoints,
    [LISTENER_TYPE]: [
      {
        name: ir.listener.name,
        message: compileListener(ir.listener, ir.internal, ir.authorize.cookieName, scoping),
      },
    ],
    [SCOPED_ROUTE_CONFIGURATION_TYPE]: routing.scopes,
    [ROUTE_CONFIGURATION_TYPE]: routing.routeConfigurations,
  };
  const encodeOrder = clusterEncodeOrder(options.clusterOrder, first, endpointsAt);
  const hostOrder = options.hostOrder;
  // Per-host delivery lists one record per host under both types, in host order.
  if (hostOrder !== undefined && scoping === 'per-host' && hostOrder.length === routing.scopes.length) {
    encodeOrder[ROUTE_CONFIGURATION_TYPE] = hostOrder;
    encodeOrder[SCOPED_ROUTE_CONFIGURATION_TYPE] = hostOrder;
  }
  return { resources, encodeOrder };
}

/**
 * The encode order of the cluster and endpoints lists from the IR clusters' memory order: IR
 * cluster i is cluster `first + i` (after the authorize cluster, if any) and endpoints
 * `endpointsAt[i]` (-1: not an EDS cluster).
 */
function clusterEncodeOrder(
  order: Int32Array | undefined,
  first: number,
  endpointsAt: Int32Array | undefined,
): { -readonly [type in ResourceType]?: Int32Array } {
  if (order === undefined || endpointsAt === undefined || order.length !== endpointsAt.length) return {};
  const clusters = new Int32Array(first + order.length);
  for (let i = 0; i < first; i++) clusters[i] = i;
  const endpoints = new Int32Array(order.length);
  let edsCount = 0;
  for (let i = 0; i < order.length; i++) {
    const at = order[i] as number;
    clusters[first + i] = first + at;
    const endpoint = endpointsAt[at] as number;
    if (endpoint >= 0) endpoints[edsCount++] = endpoint;
  }
  return { [CLUSTER_TYPE]: clusters, [CLUSTER_LOAD_ASSIGNMENT_TYPE]: endpoints.subarray(0, edsCount) };
}

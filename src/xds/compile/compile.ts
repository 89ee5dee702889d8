import type { IR, IRCluster } from '../../ir/types.js';
import type { CompiledResource, CompiledResources } from '../../proto/compiled.js';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  LISTENER_TYPE,
  ROUTE_CONFIGURATION_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
  TYPED_EXTENSION_CONFIG_TYPE,
  type ResourceType,
} from '../../proto/type-urls.js';
import { AUTHORIZE_CLUSTER, OWN_HTTP_CLUSTER } from '../../contract/names.js';
import { compileCluster } from './cluster.js';
import { compileEndpoints } from './endpoints.js';
import { authorizeCluster } from './ext-authz.js';
import { ownHttpCluster } from './own-http.js';
import { compileListener } from './listener.js';
import { compileRedirectListener } from './redirect-listener.js';
import { TRACING_CLUSTER, tracingCluster } from './tracing.js';
import { compileRouting, type RoutingMemo } from './route-configuration.js';
import { contentKeyOf } from './content-key.js';
import { kept } from './kept.js';

export type { CompiledResource, CompiledResources } from '../../proto/compiled.js';

/** One IR cluster compiled: its Cluster, and its ClusterLoadAssignment when it uses EDS. */
interface CompiledCluster {
  readonly cluster: CompiledResource<typeof CLUSTER_TYPE>;
  readonly endpoints: CompiledResource<typeof CLUSTER_LOAD_ASSIGNMENT_TYPE> | undefined;
}

/**
 * What one compile hands the next (the caller keeps it with its last good build): each IR cluster's
 * resources by the cluster object (translate gives back the identical object for an unchanged
 * route), each virtual host's by the host object (route-configuration.ts), and the few resources
 * made from IR-wide settings by their content key. Holds one compile's entries only, and the
 * per-route ones in their kept form (kept.ts): names and content keys, no messages.
 */
export interface CompileMemo {
  readonly clusters: ReadonlyMap<IRCluster, CompiledCluster>;
  readonly routing: RoutingMemo;
  readonly byKey: ReadonlyMap<string, CompiledResource>;
}

/** What `compileWithMemo` returns: the resources, the memo for the next call, and its work. */
export interface CompileOutcome {
  readonly resources: CompiledResources;
  readonly memo: CompileMemo;
  /** Route clusters and virtual hosts compiled in this call (those `previous` did not hold). */
  readonly clustersCompiled: number;
  readonly hostsCompiled: number;
}

/**
 * IR -> Envoy resources: every resource's message, per type, in a list sorted by name. Pure: no
 * clock, randomness, files, network or memory of earlier calls, so the same IR always gives the
 * same resources (and, after encoding, the same bytes and versions). Each resource carries the
 * content key of the IR it was made from (see `CompiledResource.contentKey`): one IR cluster for
 * its Cluster and ClusterLoadAssignment, one virtual host and the IR-wide route settings for its
 * per-host table and scope, so the snapshot can reuse the encoding of what a reload left unchanged.
 */
export function compile(ir: IR): CompiledResources {
  return compileWithMemo(ir).resources;
}

/**
 * `compile`, reusing what `previous` (the last good compile's memo) made from the identical IR
 * objects: an unchanged cluster or virtual host gives the memo's resources (the same names and
 * content keys; their messages, made again when read, equal), and is neither compiled nor hashed
 * again. Same IR, same resources (equal messages), with or without it.
 */
export function compileWithMemo(ir: IR, previous?: CompileMemo): CompileOutcome {
  const routing = compileRouting(ir, previous?.routing);
  const byKey = new Map<string, CompiledResource>();
  /** The resource of content key `key`: `previous`'s, else `make`'s. */
  const keyed = <T extends ResourceType>(
    key: string,
    make: () => CompiledResource<T>,
  ): CompiledResource<T> => {
    const resource = (previous?.byKey.get(key) as CompiledResource<T> | undefined) ?? make();
    byKey.set(key, resource);
    return resource;
  };
  const clusters: CompiledResource<typeof CLUSTER_TYPE>[] = [];
  const endpoints: CompiledResource<typeof CLUSTER_LOAD_ASSIGNMENT_TYPE>[] = [];
  const internal = ir.internal;
  if (internal !== undefined) {
    // One key per resource: the snapshot reuses an encoding by its key alone.
    for (const [name, make] of [
      [AUTHORIZE_CLUSTER, authorizeCluster],
      [OWN_HTTP_CLUSTER, ownHttpCluster],
    ] as const) {
      const contentKey = contentKeyOf(name, internal);
      clusters.push(keyed(contentKey, () => ({ name, message: make(internal), contentKey })));
    }
  }
  const compiledClusters = new Map<IRCluster, CompiledCluster>();
  let clustersCompiled = 0;
  for (const cluster of ir.clusters) {
    let compiled = previous?.clusters.get(cluster);
    if (compiled === undefined) {
      clustersCompiled += 1;
      compiled = compileOne(cluster);
      compiledClusters.set(cluster, keptCluster(cluster, compiled));
    } else compiledClusters.set(cluster, compiled);
    clusters.push(compiled.cluster);
    if (compiled.endpoints !== undefined) endpoints.push(compiled.endpoints);
  }
  const tracing = ir.listener.tracing;
  if (tracing !== undefined) {
    const contentKey = contentKeyOf(TRACING_CLUSTER, tracing);
    clusters.push(
      keyed(contentKey, () => ({ name: TRACING_CLUSTER, message: tracingCluster(tracing), contentKey })),
    );
  }
  const tunnels = hasTcpRoutes(ir);
  const listenerKey = contentKeyOf('listener', [
    ir.listener,
    internal ?? null,
    ir.authorize,
    routing.scoping,
    tunnels,
  ]);
  const listeners: CompiledResource<typeof LISTENER_TYPE>[] = [
    keyed(listenerKey, () => ({
      name: ir.listener.name,
      message: compileListener(ir.listener, internal, ir.authorize, routing.scoping, tunnels),
      contentKey: listenerKey,
    })),
  ];
  const redirect = ir.httpRedirect;
  if (redirect !== undefined) {
    const accessLog = ir.listener.accessLog === true;
    const contentKey = contentKeyOf('redirect-listener', [redirect, accessLog]);
    listeners.push(
      keyed(contentKey, () => ({
        name: redirect.name,
        message: compileRedirectListener(redirect, accessLog),
        contentKey,
      })),
    );
  }
  return {
    resources: {
      [CLUSTER_TYPE]: byName(clusters),
      [CLUSTER_LOAD_ASSIGNMENT_TYPE]: byName(endpoints),
      // Filter configs served on their own (ECDS): none compiled yet.
      [TYPED_EXTENSION_CONFIG_TYPE]: [],
      [LISTENER_TYPE]: byName(listeners),
      [SCOPED_ROUTE_CONFIGURATION_TYPE]: byName([...routing.scopes]),
      [ROUTE_CONFIGURATION_TYPE]: byName([...routing.routeConfigurations]),
    },
    memo: { clusters: compiledClusters, routing: routing.memo, byKey },
    clustersCompiled,
    hostsCompiled: routing.hostsCompiled,
  };
}

/** One IR cluster's resources, both keyed by the cluster's content. */
function compileOne(cluster: IRCluster): CompiledCluster {
  const contentKey = contentKeyOf('cluster', cluster);
  return {
    cluster: { name: cluster.name, message: compileCluster(cluster), contentKey },
    endpoints:
      cluster.discovery === 'EDS'
        ? { name: cluster.name, message: compileEndpoints(cluster), contentKey }
        : undefined,
  };
}

/** A compiled cluster as the memo keeps it (kept.ts): its messages made again from `cluster`. */
function keptCluster(cluster: IRCluster, compiled: CompiledCluster): CompiledCluster {
  const { cluster: resource, endpoints } = compiled;
  return {
    cluster: kept(resource, cluster, compileCluster),
    endpoints: endpoints === undefined ? undefined : kept(endpoints, cluster, compileEndpoints),
  };
}

/**
 * `resources` sorted by name (in place). Translate already emits route clusters and hosts in name
 * order, so this places the few others among them: near-sorted input, about one comparison each.
 */
function byName<T extends CompiledResource>(resources: T[]): T[] {
  return resources.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Whether any route is a TCP route (the listener then gets its tunnel chain: listener.ts). */
function hasTcpRoutes(ir: IR): boolean {
  return ir.virtualHosts.some((host) => host.routes.some((route) => route.tcpAuthority !== undefined));
}

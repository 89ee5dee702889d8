import type { IR } from '../../ir/types.js';
import type { CompiledResource, CompiledResources } from '../../proto/compiled.js';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  LISTENER_TYPE,
  ROUTE_CONFIGURATION_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
  TYPED_EXTENSION_CONFIG_TYPE,
} from '../../proto/type-urls.js';
import { AUTHORIZE_CLUSTER, OWN_HTTP_CLUSTER } from '../../contract/names.js';
import { compileCluster } from './cluster.js';
import { compileEndpoints } from './endpoints.js';
import { authorizeCluster } from './ext-authz.js';
import { ownHttpCluster } from './own-http.js';
import { compileListener } from './listener.js';
import { compileRedirectListener } from './redirect-listener.js';
import { TRACING_CLUSTER, tracingCluster } from './tracing.js';
import { compileRouting } from './route-configuration.js';
import { contentKeyOf } from './content-key.js';

export type { CompiledResource, CompiledResources } from '../../proto/compiled.js';

/**
 * IR -> Envoy resources: every resource's message, per type, in a list sorted by name. Pure: no
 * clock, randomness, files, network or memory of earlier calls, so the same IR always gives the
 * same resources (and, after encoding, the same bytes and versions). Each resource carries the
 * content key of the IR it was made from (see `CompiledResource.contentKey`): one IR cluster for
 * its Cluster and ClusterLoadAssignment, one virtual host and the IR-wide route settings for its
 * per-host table and scope, so the snapshot can reuse the encoding of what a reload left unchanged.
 */
export function compile(ir: IR): CompiledResources {
  const routing = compileRouting(ir);
  const clusters: CompiledResource<typeof CLUSTER_TYPE>[] = [];
  const endpoints: CompiledResource<typeof CLUSTER_LOAD_ASSIGNMENT_TYPE>[] = [];
  if (ir.internal !== undefined) {
    // One key per resource: the snapshot reuses an encoding by its key alone.
    clusters.push({
      name: AUTHORIZE_CLUSTER,
      message: authorizeCluster(ir.internal),
      contentKey: contentKeyOf(AUTHORIZE_CLUSTER, ir.internal),
    });
    clusters.push({
      name: OWN_HTTP_CLUSTER,
      message: ownHttpCluster(ir.internal),
      contentKey: contentKeyOf(OWN_HTTP_CLUSTER, ir.internal),
    });
  }
  for (const cluster of ir.clusters) {
    const contentKey = contentKeyOf('cluster', cluster);
    clusters.push({ name: cluster.name, message: compileCluster(cluster), contentKey });
    if (cluster.discovery === 'EDS')
      endpoints.push({ name: cluster.name, message: compileEndpoints(cluster), contentKey });
  }
  const tracing = ir.listener.tracing;
  if (tracing !== undefined) {
    const message = tracingCluster(tracing);
    clusters.push({ name: TRACING_CLUSTER, message, contentKey: contentKeyOf(TRACING_CLUSTER, tracing) });
  }
  const listener = compileListener(ir.listener, ir.internal, ir.authorize, routing.scoping);
  return {
    [CLUSTER_TYPE]: byName(clusters),
    [CLUSTER_LOAD_ASSIGNMENT_TYPE]: byName(endpoints),
    // Filter configs served on their own (ECDS): none compiled yet.
    [TYPED_EXTENSION_CONFIG_TYPE]: [],
    [LISTENER_TYPE]: byName([
      { name: ir.listener.name, message: listener },
      ...(ir.httpRedirect === undefined
        ? []
        : [
            {
              name: ir.httpRedirect.name,
              message: compileRedirectListener(ir.httpRedirect, ir.listener.accessLog === true),
            },
          ]),
    ]),
    [SCOPED_ROUTE_CONFIGURATION_TYPE]: byName([...routing.scopes]),
    [ROUTE_CONFIGURATION_TYPE]: byName([...routing.routeConfigurations]),
  };
}

/** `resources` sorted by name (in place; translate already emits names in order, so this is a check). */
function byName<T extends CompiledResource>(resources: T[]): T[] {
  return resources.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

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
import { routeScoping } from './route-scoping.js';
import { IdentityMemo } from '../../shared/identity-memo.js';
import type { IRCluster } from '../../ir/types.js';

/** Compiled clusters and endpoints by IR cluster: unchanged routes keep their message objects. */
const clusterMessages = new IdentityMemo<IRCluster, ProtoObject>();
const endpointMessages = new IdentityMemo<IRCluster, ProtoObject>();

/** A compiled resource before encoding: its name and its proto3-JSON-shaped message. */
export interface CompiledResource {
  readonly name: string;
  readonly message: ProtoObject;
}

/** Every resource type's compiled resources, sorted by name. */
export type CompiledResources = Readonly<Record<ResourceType, readonly CompiledResource[]>>;

/** `make(cluster)`, or what it returned for the same IR cluster before. */
function remembered(
  memo: IdentityMemo<IRCluster, ProtoObject>,
  cluster: IRCluster,
  make: (cluster: IRCluster) => ProtoObject,
): ProtoObject {
  const found = memo.lookup(cluster, '');
  if (found !== undefined) return found;
  const message = make(cluster);
  memo.remember(cluster, '', message);
  return message;
}

/**
 * IR -> Envoy resources. Pure: no clock, randomness, files or network, so the same IR always
 * gives the same resources (and, after encoding, the same bytes and versions). Results for
 * unchanged IR objects are remembered (same input objects, same output objects), which changes
 * nothing but the time a reload takes. Callers must treat the output as immutable.
 */
export function compile(ir: IR): CompiledResources {
  const scoping = routeScoping(ir);
  const routing = compileRouting(ir, scoping);
  return {
    [CLUSTER_TYPE]: [
      // Sorted by name: `portcullis-*` before every `route-*`.
      ...(ir.internal === undefined
        ? []
        : [{ name: AUTHORIZE_CLUSTER, message: authorizeCluster(ir.internal) }]),
      ...ir.clusters.map((cluster) => ({
        name: cluster.name,
        message: remembered(clusterMessages, cluster, compileCluster),
      })),
    ],
    [CLUSTER_LOAD_ASSIGNMENT_TYPE]: ir.clusters
      .filter((cluster) => cluster.discovery === 'EDS')
      .map((cluster) => ({
        name: cluster.name,
        message: remembered(endpointMessages, cluster, compileEndpoints),
      })),
    [LISTENER_TYPE]: [
      {
        name: ir.listener.name,
        message: compileListener(ir.listener, ir.internal, ir.authorize.cookieName, scoping),
      },
    ],
    [SCOPED_ROUTE_CONFIGURATION_TYPE]: routing.scopes,
    [ROUTE_CONFIGURATION_TYPE]: routing.routeConfigurations,
  };
}

/**
 * Type URLs of the resources and typed configs Portcullis emits. One place, so the compiler, the
 * snapshot and the ADS server agree (xDS protocol: "type URLs" section of the xDS REST and gRPC
 * protocol document).
 */
export const TYPE_PREFIX = 'type.googleapis.com/';

export const LISTENER_TYPE = 'envoy.config.listener.v3.Listener';
export const ROUTE_CONFIGURATION_TYPE = 'envoy.config.route.v3.RouteConfiguration';
export const CLUSTER_TYPE = 'envoy.config.cluster.v3.Cluster';
export const CLUSTER_LOAD_ASSIGNMENT_TYPE = 'envoy.config.endpoint.v3.ClusterLoadAssignment';
export const SCOPED_ROUTE_CONFIGURATION_TYPE = 'envoy.config.route.v3.ScopedRouteConfiguration';
/** ECDS: one HTTP filter's config as its own resource, updated without touching its listener. */
export const TYPED_EXTENSION_CONFIG_TYPE = 'envoy.config.core.v3.TypedExtensionConfig';

/**
 * The resource kinds served over ADS, in make-before-break push order: CDS, EDS, ECDS, LDS, SRDS,
 * RDS. A filter config (ECDS) goes before the listeners whose filters name it; a scope (SRDS) names
 * its RouteConfiguration, and Envoy subscribes to that name once it sees the scope, so scopes go
 * before the route configurations they point at.
 */
export const RESOURCE_TYPES = [
  CLUSTER_TYPE,
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  TYPED_EXTENSION_CONFIG_TYPE,
  LISTENER_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
  ROUTE_CONFIGURATION_TYPE,
] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];

/** Full type URL (`type.googleapis.com/<name>`) for a message name. */
export function typeUrl(messageName: string): string {
  return TYPE_PREFIX + messageName;
}

/** Short names used in logs and file names. */
export const SHORT_NAMES: Record<
  ResourceType,
  'clusters' | 'endpoints' | 'filters' | 'listeners' | 'scopes' | 'routes'
> = {
    [CLUSTER_TYPE]: 'clusters',
    [CLUSTER_LOAD_ASSIGNMENT_TYPE]: 'endpoints',
    [TYPED_EXTENSION_CONFIG_TYPE]: 'filters',
    [LISTENER_TYPE]: 'listeners',
    [SCOPED_ROUTE_CONFIGURATION_TYPE]: 'scopes',
    [ROUTE_CONFIGURATION_TYPE]: 'routes',
  };

/** Returns the resource type for a type URL, or undefined when Portcullis does not serve it. */
export function resourceTypeOf(url: string): ResourceType | undefined {
  const name = url.startsWith(TYPE_PREFIX) ? url.slice(TYPE_PREFIX.length) : url;
  return (RESOURCE_TYPES as readonly string[]).includes(name) ? (name as ResourceType) : undefined;
}

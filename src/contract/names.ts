/**
 * Names Envoy's resources and Portcullis's services must agree on. Changing one is a protocol
 * change: every compiled resource, bootstrap and ext_authz lookup uses these constants.
 */

/**
 * The HTTP listener's routing table: the one RouteConfiguration fetched over RDS, or (host-scoped
 * delivery) the name of the connection manager's scoped routes, whose per-host scopes and route
 * configurations are named by `hostScopeName`.
 */
export const INGRESS_ROUTE_CONFIG = 'ingress';

/**
 * Name of the ScopedRouteConfiguration and RouteConfiguration that carry one host's virtual host
 * under host-scoped delivery: `ingress/<host>`. Stable, so an unchanged host keeps its version.
 */
export function hostScopeName(host: string): string {
  return `${INGRESS_ROUTE_CONFIG}/${host}`;
}

/** Static cluster in the Envoy bootstrap that points at Portcullis's gRPC (ADS) listener. */
export const XDS_CLUSTER = 'portcullis-xds';

/** Envoy HTTP filter names, in chain order (Lua and ext_authz as needed, then the router). */
export const HTTP_FILTER_LUA = 'envoy.filters.http.lua';
export const HTTP_FILTER_EXT_AUTHZ = 'envoy.filters.http.ext_authz';
export const HTTP_FILTER_ROUTER = 'envoy.filters.http.router';

/** Network and listener filter names. */
export const NETWORK_FILTER_HCM = 'envoy.filters.network.http_connection_manager';
export const LISTENER_FILTER_PROXY_PROTOCOL = 'envoy.filters.listener.proxy_protocol';
export const LISTENER_FILTER_TLS_INSPECTOR = 'envoy.filters.listener.tls_inspector';
export const TRANSPORT_SOCKET_TLS = 'envoy.transport_sockets.tls';
export const HTTP_PROTOCOL_OPTIONS_KEY = 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions';

/** Buffer limit per connection on listeners and clusters (Envoy edge best practice, 32 KiB). */
export const CONNECTION_BUFFER_LIMIT_BYTES = 32 * 1024;

/** CDS cluster through which Envoy's ext_authz filter reaches Portcullis's Authorization service. */
export const AUTHORIZE_CLUSTER = 'portcullis-authorize';

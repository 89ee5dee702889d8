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

/**
 * The plain-HTTP listener of `http_redirect_addr`: it answers every request with a 301 to the same
 * URL over HTTPS, from its own inline route table (no RDS, no ext_authz, no upstream).
 */
export const HTTP_REDIRECT_LISTENER = 'http-redirect';

/** Static cluster in the Envoy bootstrap that points at Portcullis's gRPC (ADS) listener. */
export const XDS_CLUSTER = 'portcullis-xds';

/**
 * Envoy HTTP filter names, in chain order: the host-case Lua filter (per-host routes only), the
 * identity-header strip, with the fast path on jwt_authn and the shadow RBAC (its name is
 * contract/fast-path.ts `FAST_PATH_FILTER`), ext_authz (with authorization on), the response
 * header rewrite (only when some route has `rewrite_response_headers`), the credential strip, the
 * router. The Lua filters have Portcullis's own names: Envoy finds a filter's per-route config by
 * the filter's name, so the host-case filter's per-route "off" and the rewrite filter's per-route
 * "on" each reach their own filter alone. Per-route config names only `HTTP_FILTER_HOST_CASE`,
 * `HTTP_FILTER_REWRITE_RESPONSE_HEADERS` and `HTTP_FILTER_EXT_AUTHZ`; the strips have none, ever,
 * and the extension name `envoy.filters.http.lua` is never a key either, so no lookup by extension
 * name could reach them.
 */
export const HTTP_FILTER_HOST_CASE = 'portcullis.host_case';
export const HTTP_FILTER_STRIP_IDENTITY = 'portcullis.strip_identity_headers';
/** jwt_authn: also the dynamic-metadata namespace it writes the verified payload under. */
export const HTTP_FILTER_JWT_AUTHN = 'envoy.filters.http.jwt_authn';
export const HTTP_FILTER_EXT_AUTHZ = 'envoy.filters.http.ext_authz';
/** Also the route `filter_metadata` namespace its rules are read from, and its dynamic-metadata namespace. */
export const HTTP_FILTER_REWRITE_RESPONSE_HEADERS = 'portcullis.rewrite_response_headers';
export const HTTP_FILTER_STRIP_CREDENTIALS = 'portcullis.strip_credentials';
export const HTTP_FILTER_ROUTER = 'envoy.filters.http.router';

/**
 * The dynamic-metadata namespace every RBAC filter writes its (shadow) result under, whatever the
 * filter is named: the fast path's shadow RBAC result is read from here (FAST_PATH_RESULT_KEY).
 */
export const RBAC_METADATA_NAMESPACE = 'envoy.filters.http.rbac';

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

/**
 * CDS cluster through which Envoy reaches Portcullis's own HTTP server (sign-in, callback,
 * sign-out, user page): `/.portcullis/*` on every route host and every path of the authenticate host.
 */
export const OWN_HTTP_CLUSTER = 'portcullis-http';

import type { IR, IRInternal } from '../../ir/types.js';
import { durationMs } from '../../proto/codec.js';
import type { Message } from '../../proto/messages.js';
import { OWN_HTTP_CLUSTER } from '../../contract/names.js';
import { OWN_PATH_PREFIX } from '../../contract/endpoints.js';
import { jwksRoute, portcullisCluster } from './ext-authz.js';
import { internalUpstreamTlsSocket } from '../../contract/internal-tls.js';

/**
 * Bound on one request to Portcullis's own HTTP server. Sign-in callbacks wait on the identity
 * provider's token endpoint, so this is longer than a Check but still bounded.
 */
const OWN_HTTP_TIMEOUT_MS = 30_000;

/**
 * The cluster for Portcullis's own HTTP server (`IRInternal.http`), over HTTP/1.1; over TLS that
 * trusts only the derived CA and name when `tls_derive` is set.
 */
export function ownHttpCluster(internal: IRInternal): Message<'envoy.config.cluster.v3.Cluster'> {
  const cluster = portcullisCluster(OWN_HTTP_CLUSTER, internal.http, 'http1');
  const tls = internal.http.tls;
  return tls === undefined
    ? cluster
    : { ...cluster, transport_socket: internalUpstreamTlsSocket(tls, 'http/1.1') };
}

/**
 * The route every virtual host gets right after the JWKS route: `/.portcullis/*` goes to
 * Portcullis's HTTP server. It has no per-filter config on purpose: ext_authz runs on it with no
 * route id, and the authorizer allows it and forwards the session handle (OWN_SESSION_HEADER),
 * since the credential strip removes the cookie before the router. Kept tiny (it repeats per host).
 */
export function ownEndpointsRoute(): Message<'envoy.config.route.v3.Route'> {
  return ownRoute({ prefix: OWN_PATH_PREFIX });
}

function ownRoute(
  match: Message<'envoy.config.route.v3.RouteMatch'>,
): Message<'envoy.config.route.v3.Route'> {
  return { match, route: { cluster: OWN_HTTP_CLUSTER, timeout: durationMs(OWN_HTTP_TIMEOUT_MS) } };
}

/**
 * The authenticate host (`authenticate_service_url`'s host name, lower case) when Envoy serves it:
 * authorization on and an authenticate URL set; else undefined.
 */
export function authenticateHost(ir: Pick<IR, 'internal' | 'authorize'>): string | undefined {
  if (ir.internal === undefined || ir.authorize.authenticateUrl === undefined) return undefined;
  return new URL(ir.authorize.authenticateUrl).hostname.toLowerCase();
}

/**
 * The virtual host of the authenticate host: the JWKS route, then every path to Portcullis's HTTP
 * server (sign-in, the OAuth callback, sign-out, the user page). Like the own-endpoints route it
 * carries no per-filter config: ext_authz runs with no route id and the authorizer recognises the
 * host. Translate refuses a route on this host, so its name and domain are free.
 */
export function authenticateVirtualHost(host: string): Message<'envoy.config.route.v3.VirtualHost'> {
  return { name: host, domains: [host], routes: [jwksRoute(), ownRoute({ prefix: '/' })] };
}

import { isIP } from 'node:net';
import type { IR, IRInternal, IRRoute } from '../../ir/types.js';
import { durationMs, typed, wrapped } from '../../proto/codec.js';
import type { AnyMessage, Message } from '../../proto/messages.js';
import {
  AUTHORIZE_CLUSTER,
  CONNECTION_BUFFER_LIMIT_BYTES,
  HTTP_FILTER_EXT_AUTHZ,
  HTTP_PROTOCOL_OPTIONS_KEY,
} from '../../contract/names.js';
import { ASSERTION_HEADER, JWKS_PATH, encodeRouteContext } from '../../contract/authz.js';
import { grpcCredentialUpstreamFilters } from '../../contract/grpc-credential.js';
import { internalUpstreamTlsSocket } from '../../contract/internal-tls.js';
import { fastPathGate } from './fast-path.js';

const EXT_AUTHZ_TYPE = 'envoy.extensions.filters.http.ext_authz.v3.ExtAuthz';
const EXT_AUTHZ_PER_ROUTE_TYPE = 'envoy.extensions.filters.http.ext_authz.v3.ExtAuthzPerRoute';

/**
 * The ext_authz HTTP filter: gRPC to Portcullis's Authorization service, fail closed
 * (`failure_mode_allow` false, errors and timeouts answer 503), a bounded timeout and no request
 * body (security-threats.md 0.1). It sits right before the router. Each Check carries the gRPC
 * credential, which the authorize cluster's upstream filter injects from the bootstrap's secret
 * (`authorizeCluster`): Portcullis answers only calls that present it. With `fastPath`, it runs
 * only when the fast path's shadow RBAC did not allow the request (`fastPathGate`).
 */
export function extAuthzFilter(
  internal: IRInternal,
  fastPath = false,
): Message<'envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter'> {
  const config: Message<typeof EXT_AUTHZ_TYPE> = {
    grpc_service: {
      envoy_grpc: { cluster_name: AUTHORIZE_CLUSTER },
      timeout: durationMs(internal.authorizeTimeoutMs),
    },
    transport_api_version: 'V3',
    failure_mode_allow: false,
    status_on_error: { code: 'ServiceUnavailable' },
  };
  if (fastPath) config.filter_enabled_metadata = fastPathGate();
  return { name: HTTP_FILTER_EXT_AUTHZ, typed_config: typed(EXT_AUTHZ_TYPE, config) };
}

/**
 * The cluster ext_authz calls: Portcullis's gRPC listener over HTTP/2, over TLS verified against
 * the derived CA and name when `tls_derive` is set (the same cluster otherwise), with the upstream
 * filter that injects the gRPC credential from the bootstrap's static secret (contract/grpc-credential.ts).
 */
export function authorizeCluster(internal: IRInternal): Message<'envoy.config.cluster.v3.Cluster'> {
  const plain = portcullisCluster(AUTHORIZE_CLUSTER, internal.authorize, 'http2');
  const cluster = {
    ...plain,
    typed_extension_protocol_options: {
      [HTTP_PROTOCOL_OPTIONS_KEY]: typed(HTTP_PROTOCOL_OPTIONS_KEY, {
        explicit_http_config: { http2_protocol_options: {} },
        http_filters: grpcCredentialUpstreamFilters(),
      }),
    },
  };
  const tls = internal.authorize.tls;
  return tls === undefined ? cluster : { ...cluster, transport_socket: internalUpstreamTlsSocket(tls) };
}

/**
 * A cluster to one of Portcullis's own listeners at `address`: STATIC for an IP address,
 * STRICT_DNS for a name, a 1 s connect timeout (it is loopback or a private network) and the
 * given HTTP version.
 */
export function portcullisCluster(
  name: string,
  address: { readonly host: string; readonly port: number },
  protocol: 'http1' | 'http2',
): Message<'envoy.config.cluster.v3.Cluster'> {
  return {
    name,
    type: isIP(address.host) === 0 ? 'STRICT_DNS' : 'STATIC',
    connect_timeout: durationMs(1000),
    per_connection_buffer_limit_bytes: wrapped(CONNECTION_BUFFER_LIMIT_BYTES),
    load_assignment: {
      cluster_name: name,
      endpoints: [
        {
          lb_endpoints: [
            {
              endpoint: { address: { socket_address: { address: address.host, port_value: address.port } } },
            },
          ],
        },
      ],
    },
    typed_extension_protocol_options: {
      [HTTP_PROTOCOL_OPTIONS_KEY]: typed(HTTP_PROTOCOL_OPTIONS_KEY, {
        explicit_http_config:
          protocol === 'http2' ? { http2_protocol_options: {} } : { http_protocol_options: {} },
      }),
    },
  };
}

/**
 * Per-route ext_authz settings: protected routes tell Portcullis which route they are (the route
 * id, through the shared contract); public routes skip the call entirely.
 */
export function routeAuthzConfig(route: IRRoute): Readonly<Record<string, AnyMessage>> {
  if (route.public) {
    // ext_authz switched off: the same setting for every public route.
    return { [HTTP_FILTER_EXT_AUTHZ]: typed(EXT_AUTHZ_PER_ROUTE_TYPE, { disabled: true }) };
  }
  return {
    [HTTP_FILTER_EXT_AUTHZ]: typed(EXT_AUTHZ_PER_ROUTE_TYPE, {
      check_settings: { context_extensions: encodeRouteContext(route.id) },
    }),
  };
}

/**
 * Identity headers a public route removes itself, since no ext_authz answer strips them there:
 * the assertion and every configured claim header (`X-Portcullis-Claim-*` or custom names).
 */
export function publicRouteHeadersToRemove(ir: Pick<IR, 'authorize'>): string[] {
  const claimHeaders = Object.keys(ir.authorize.claimHeaders).map((header) => header.toLowerCase());
  return [...new Set([ASSERTION_HEADER, `${ASSERTION_HEADER}-for`, ...claimHeaders])].sort();
}

/**
 * The JWKS route every virtual host gets first. It is deliberately tiny (it is repeated per host,
 * and one 10,000-host route table must stay well under 4 MiB): ext_authz runs on it with no
 * route id, and Portcullis answers the JWKS itself as a 200 local reply, so the route's own action
 * is never taken. (Envoy runs ext_authz on direct-response routes too since 1.20; a cluster route
 * keeps this one's shape the same as the own-endpoints route.)
 */
export function jwksRoute(): Message<'envoy.config.route.v3.Route'> {
  return { match: { path: JWKS_PATH }, route: { cluster: AUTHORIZE_CLUSTER } };
}

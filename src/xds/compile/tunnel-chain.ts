import { HTTP_FILTER_CONNECT_ONLY, NETWORK_FILTER_HCM, TUNNEL_ALPN_MARKER } from '../../contract/names.js';
import { typed, wrapped } from '../../proto/codec.js';
import type { Message } from '../../proto/messages.js';

type HttpConnectionManager =
  Message<'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager'>;
type FilterChain = Message<'envoy.config.listener.v3.FilterChain'>;

/**
 * HTTP/2 receive windows on the tunnel chain. The default chain's 64 KiB per stream lets a client
 * send 64 KiB before it must wait for Envoy's WINDOW_UPDATE, a round trip a bulk copy through a
 * tunnel paid on every 64 KiB (its echo took a fifth longer in the tcp bench). The connection window bounds what one
 * connection can make Envoy hold, whatever its streams do: Envoy grants window back only for bytes
 * it passed on (a stream whose upstream is slow stops being granted any).
 */
export const TUNNEL_STREAM_WINDOW_BYTES = 1024 * 1024;
export const TUNNEL_CONNECTION_WINDOW_BYTES = 4 * 1024 * 1024;

/**
 * The RBAC config of the tunnel chain's first filter: a request is allowed only when its method
 * is CONNECT (Envoy answers anything else 403 before any other filter runs), so no HTTP route is
 * reached with the tunnel chain's bigger windows. Pure.
 */
export function connectOnlyRbac(): Message<'envoy.extensions.filters.http.rbac.v3.RBAC'> {
  return {
    rules: {
      action: 'ALLOW',
      policies: {
        'connect-only': {
          permissions: [{ header: { name: ':method', string_match: { exact: 'CONNECT' } } }],
          principals: [{ any: true }],
        },
      },
    },
  };
}

/**
 * The filter chain for `portcullis tcp` connections: chosen when the client's TLS hello offers
 * TUNNEL_ALPN_MARKER (Envoy's TLS inspector reads it; the listener still negotiates h2), it is the
 * listener's hardened connection manager `manager` unchanged except for two things: an RBAC filter
 * first that refuses every method but CONNECT, and HTTP/2 windows sized for bulk transfer
 * (TUNNEL_STREAM_WINDOW_BYTES per stream, TUNNEL_CONNECTION_WINDOW_BYTES per connection; stream
 * count, headers and timeouts as on the default chain). The match depends on nothing in the routes,
 * so adding or removing a TCP route never changes the listener (which would drain open tunnels).
 * Any client may offer the marker: the limits here are what any client may get, and bounded.
 */
export function tunnelFilterChain(
  manager: HttpConnectionManager,
  transportSocket: Message<'envoy.config.core.v3.TransportSocket'>,
): FilterChain {
  const tunnelManager: HttpConnectionManager = {
    ...manager,
    http_filters: [
      {
        name: HTTP_FILTER_CONNECT_ONLY,
        typed_config: typed('envoy.extensions.filters.http.rbac.v3.RBAC', connectOnlyRbac()),
      },
      ...(manager.http_filters ?? []),
    ],
    http2_protocol_options: {
      ...manager.http2_protocol_options,
      initial_stream_window_size: wrapped(TUNNEL_STREAM_WINDOW_BYTES),
      initial_connection_window_size: wrapped(TUNNEL_CONNECTION_WINDOW_BYTES),
    },
  };
  return {
    name: 'tunnel',
    filter_chain_match: { application_protocols: [TUNNEL_ALPN_MARKER] },
    filters: [
      {
        name: NETWORK_FILTER_HCM,
        typed_config: typed(
          'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
          tunnelManager,
        ),
      },
    ],
    transport_socket: transportSocket,
  };
}

/**
 * Pieces of a static Envoy bootstrap in Envoy's own JSON config shape (Durations as strings such
 * as `'1s'`, which the compiler's proto3-JSON objects are not), for the tests and benchmarks that
 * run an Envoy without an ADS server.
 */

/** The router HTTP filter, last in every static filter chain. */
export const ROUTER_FILTER = {
  name: 'envoy.filters.http.router',
  typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' },
} as const;

/** A STATIC cluster with one endpoint at 127.0.0.1:`port`; `extra` adds or overrides fields. */
export function staticLoopbackCluster(
  name: string,
  port: number,
  extra: Readonly<Record<string, unknown>> = {},
): Record<string, unknown> {
  return {
    name,
    type: 'STATIC',
    connect_timeout: '1s',
    load_assignment: {
      cluster_name: name,
      endpoints: [
        {
          lb_endpoints: [
            { endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } },
          ],
        },
      ],
    },
    ...extra,
  };
}

/**
 * A listener on 127.0.0.1:`port` whose one filter chain is an HTTP connection manager with the
 * settings in `connectionManager` (`stat_prefix`, `route_config`, `http_filters`, ...).
 */
export function staticHttpListener(
  name: string,
  port: number,
  connectionManager: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  return {
    name,
    address: { socket_address: { address: '127.0.0.1', port_value: port } },
    filter_chains: [
      {
        filters: [
          {
            name: 'envoy.filters.network.http_connection_manager',
            typed_config: {
              '@type':
                'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
              ...connectionManager,
            },
          },
        ],
      },
    ],
  };
}

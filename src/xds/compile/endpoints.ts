import type { IRCluster } from '../../ir/types.js';
import { wrapped } from '../../proto/codec.js';
import type { Message } from '../../proto/messages.js';

/**
 * IR endpoints -> Envoy `endpoint.v3.ClusterLoadAssignment`: one locality, weights as
 * `load_balancing_weight` when the route gave them, and each endpoint's `hostname` kept for
 * auto SNI and logs.
 */
export function compileEndpoints(
  cluster: IRCluster,
): Message<'envoy.config.endpoint.v3.ClusterLoadAssignment'> {
  return {
    cluster_name: cluster.name,
    endpoints: [
      {
        lb_endpoints: cluster.endpoints.map((endpoint) => {
          const lbEndpoint: Message<'envoy.config.endpoint.v3.LbEndpoint'> = {
            endpoint: {
              address: { socket_address: { address: endpoint.host, port_value: endpoint.port } },
              hostname: endpoint.host,
            },
          };
          if (endpoint.weight !== undefined) lbEndpoint.load_balancing_weight = wrapped(endpoint.weight);
          return lbEndpoint;
        }),
      },
    ],
  };
}

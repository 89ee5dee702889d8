import type { IRCluster } from '../../ir/types.js';
import { wrapped, type ProtoObject } from '../../proto/codec.js';

/**
 * IR endpoints -> Envoy `endpoint.v3.ClusterLoadAssignment`: one locality, weights as
 * `load_balancing_weight` when the route gave them, and each endpoint's `hostname` kept for
 * auto SNI and logs.
 */
export function compileEndpoints(cluster: IRCluster): ProtoObject {
  return {
    cluster_name: cluster.name,
    endpoints: [
      {
        lb_endpoints: cluster.endpoints.map((endpoint) => {
          const lbEndpoint: ProtoObject = {
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

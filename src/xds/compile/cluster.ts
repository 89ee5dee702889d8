import type { IRCluster } from '../../ir/types.js';
import { durationMs, typed, wrapped } from '../../proto/codec.js';
import type { AnyMessage, Message } from '../../proto/messages.js';
import { CONNECTION_BUFFER_LIMIT_BYTES, HTTP_PROTOCOL_OPTIONS_KEY } from '../../contract/names.js';
import { compileEndpoints } from './endpoints.js';
import { compileHealthCheck } from './health-check.js';
import { compileOutlierDetection } from './outlier-detection.js';
import { compileUpstreamTls } from './upstream-tls.js';

/**
 * IR cluster -> Envoy `cluster.v3.Cluster`. EDS clusters get their endpoints over ADS (pushed
 * before listeners and routes, make-before-break) and stay warming until they have them; STRICT_DNS clusters carry them inline because
 * EDS cannot hold hostnames. Upstream HTTP is HTTP/2 for h2c destinations, HTTP/1.1 for websocket
 * routes and plain upstreams, and ALPN (h2 or HTTP/1.1) for TLS upstreams.
 */
export function compileCluster(cluster: IRCluster): Message<'envoy.config.cluster.v3.Cluster'> {
  const out: Message<'envoy.config.cluster.v3.Cluster'> = {
    name: cluster.name,
    type: cluster.discovery,
    connect_timeout: durationMs(cluster.connectTimeoutMs),
    lb_policy: cluster.lbPolicy,
    per_connection_buffer_limit_bytes: wrapped(CONNECTION_BUFFER_LIMIT_BYTES),
  };
  if (cluster.discovery === 'EDS') {
    // No initial fetch timeout: the cluster warms until its endpoints arrive (Portcullis sends every
    // EDS cluster's endpoints with it: the snapshot's consistency check). Envoy's default of 15 s
    // made a busy Envoy (50,000 clusters at cold start) activate clusters with no endpoints, and
    // log a warning for each.
    out.eds_cluster_config = {
      eds_config: { ads: {}, resource_api_version: 'V3', initial_fetch_timeout: durationMs(0) },
    };
  } else {
    out.load_assignment = compileEndpoints(cluster);
    out.dns_lookup_family = 'V4_PREFERRED';
  }
  if (cluster.healthChecks.length > 0) out.health_checks = cluster.healthChecks.map(compileHealthCheck);
  if (cluster.outlierDetection !== undefined)
    out.outlier_detection = compileOutlierDetection(cluster.outlierDetection);
  if (cluster.healthyPanicThreshold !== undefined) {
    out.common_lb_config = { healthy_panic_threshold: { value: cluster.healthyPanicThreshold } };
  }
  if (cluster.tls !== undefined) out.transport_socket = compileUpstreamTls(cluster.tls);
  // A TCP route's cluster carries the tunnelled bytes as they are: no HTTP protocol to set.
  if (cluster.upstreamProtocol !== 'tcp')
    out.typed_extension_protocol_options = protocolOptions(
      cluster.upstreamProtocol,
      cluster.tls !== undefined && hasManyHosts(cluster),
    );
  return out;
}

/** The cluster's `typed_extension_protocol_options`: its upstream HTTP protocol, and per-host SNI. */
function protocolOptions(
  protocol: IRCluster['upstreamProtocol'],
  perHostSni: boolean,
): Readonly<Record<string, AnyMessage>> {
  return {
    [HTTP_PROTOCOL_OPTIONS_KEY]: typed(HTTP_PROTOCOL_OPTIONS_KEY, httpProtocolOptions(protocol, perHostSni)),
  };
}

function httpProtocolOptions(
  protocol: IRCluster['upstreamProtocol'],
  perHostSni: boolean,
): Message<typeof HTTP_PROTOCOL_OPTIONS_KEY> {
  const options: Message<typeof HTTP_PROTOCOL_OPTIONS_KEY> =
    protocol === 'alpn'
      ? { auto_config: { http_protocol_options: {}, http2_protocol_options: {} } }
      : protocol === 'http2'
        ? { explicit_http_config: { http2_protocol_options: {} } }
        : { explicit_http_config: { http_protocol_options: {} } };
  if (perHostSni) {
    // Different hosts behind one route: each connection uses and verifies its own host's name.
    options.upstream_http_protocol_options = { auto_sni: true, auto_san_validation: true };
  }
  return options;
}

/** True when the cluster's endpoints name more than one host. */
function hasManyHosts(cluster: IRCluster): boolean {
  const first = cluster.endpoints[0]?.host;
  return cluster.endpoints.some((endpoint) => endpoint.host !== first);
}

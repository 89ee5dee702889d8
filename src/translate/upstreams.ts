import { isIP } from 'node:net';
import type { Problem } from '../shared/errors.js';
import type { RouteSettings } from '../config/types.js';
import type { IRCluster, IREndpoint, IRUpstreamTls } from '../ir/types.js';

/** Envoy's cluster connect timeout for route upstreams. */
export const UPSTREAM_CONNECT_TIMEOUT_MS = 10_000;

/**
 * Builds the cluster for one route: endpoints with weights, discovery type, TLS, health checks and
 * outlier detection, named `clusterName` (the route's identity, never its upstreams). Hostnames
 * other than IP literals need DNS, which EDS cannot carry, so such clusters are STRICT_DNS with
 * inline endpoints (an endpoint or weight change is an in-place update of the same cluster); all-IP
 * clusters use EDS so endpoint and weight changes are pushed without touching the cluster.
 */
export function buildCluster(
  route: RouteSettings,
  clusterName: string,
  systemCaFile: string,
  problems: Problem[],
): IRCluster {
  const endpoints: IREndpoint[] = route.to.map(({ hostname, port, weight }) => ({
    host: normaliseHost(hostname),
    port,
    weight,
  }));
  const schemes = new Set(route.to.map(({ protocol }) => protocol));
  // A route with no destinations yet (`to: []`) gets a plain-HTTP cluster with no endpoints.
  const scheme = route.to[0]?.protocol ?? 'http:';
  const mixed = schemes.size > 1;
  if (mixed) {
    problems.push({
      path: `${route.source_path}.to`,
      message: 'cannot mix http, https and h2c destinations in one route',
    });
  }
  const useTls = scheme === 'https:' || (mixed && schemes.has('https:'));
  const upstreamProtocol =
    scheme === 'h2c:' || (mixed && schemes.has('h2c:'))
      ? 'http2'
      : route.allow_websockets || !useTls
        ? 'http1'
        : 'alpn';
  if (upstreamProtocol === 'http2' && route.allow_websockets) {
    problems.push({
      path: `${route.source_path}.allow_websockets`,
      message: 'websockets need an HTTP/1.1 upstream; use http:// or https:// destinations',
    });
  }
  route.health_checks.forEach((check, index) => {
    if (check.grpc !== undefined && upstreamProtocol === 'http1') {
      problems.push({
        path: `${route.source_path}.health_checks[${index}].grpc_health_check`,
        message: 'gRPC health checks need an HTTP/2 upstream: use h2c:// (or https://) destinations',
      });
    }
  });
  return {
    name: clusterName,
    discovery: endpoints.every((endpoint) => isIP(endpoint.host) !== 0) ? 'EDS' : 'STRICT_DNS',
    lbPolicy: route.load_balancing_policy,
    endpoints,
    connectTimeoutMs: UPSTREAM_CONNECT_TIMEOUT_MS,
    tls: useTls ? upstreamTls(route, systemCaFile) : undefined,
    upstreamProtocol,
    // The config's validated settings have the IR's shapes (ir/upstream.ts): taken as they are.
    healthChecks: route.health_checks,
    outlierDetection: route.outlier_detection,
    healthyPanicThreshold: route.healthy_panic_threshold,
  };
}

function upstreamTls(route: RouteSettings, systemCaFile: string): IRUpstreamTls {
  const firstHost = route.to[0]?.hostname ?? '';
  return {
    serverName: route.tls_server_name ?? normaliseSni(firstHost),
    skipVerify: route.tls_skip_verify,
    customCaPem: route.tls_custom_ca_pem,
    systemCaFile,
    clientCertificate:
      route.tls_client_cert_pem !== undefined && route.tls_client_key_pem !== undefined
        ? { certPem: route.tls_client_cert_pem, keyPem: route.tls_client_key_pem }
        : undefined,
  };
}

/** `localhost` becomes 127.0.0.1 (Envoy would otherwise need DNS and might pick ::1); IPv6 loses brackets. */
function normaliseHost(hostname: string): string {
  if (hostname === 'localhost') return '127.0.0.1';
  return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
}

function normaliseSni(hostname: string): string {
  return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
}

/**
 * TCP routes (`from: tcp+https://host:port`, or the bastion form `tcp+https://bastion/target:port`)
 * as IR: a route that Envoy gives only a CONNECT naming exactly the route's `host:port`, in the
 * virtual host of that host (the connection manager picks virtual hosts and scopes by the host
 * part of `:authority`), with timeouts off unless set, and a cluster of plain TCP endpoints
 * (weights, TCP health checks and outlier detection as for HTTP routes).
 */
import type { Problem } from '../shared/errors.js';
import type { Config, RouteSettings } from '../config/types.js';
import type { IRCluster, IRRoute } from '../ir/types.js';
import { connectAuthority } from '../config/parse-url.js';
import { identityProviderFor, NO_IDENTITY_PROVIDER } from '../config/identity-provider.js';
import { assembleRoutePolicy } from './route-policy.js';
import { fromPort, placeHost } from './hosts.js';
import { buildCluster } from './upstreams.js';

/** One IR route placed in a virtual host, with its cluster (none where another entry carries it). */
export interface PlacedTcpRoute {
  readonly vhost: string;
  readonly domains: readonly string[];
  readonly route: IRRoute;
  readonly cluster: IRCluster | undefined;
}

/**
 * A TCP route's IR: first placed in the virtual host of its CONNECT host, with its cluster; for the
 * bastion form also placed (without the cluster) in the bastion host's virtual host, where no
 * CONNECT for it ever arrives but which gives the bastion host its `/.portcullis/*` endpoints
 * (programmatic login: clients sign in at the host they dial) and lets sign-in locate the route
 * there. Problems (HTTP or gRPC health checks, which a TCP upstream cannot answer) go to
 * `problems`. Pure.
 */
export function translateTcpRoute(
  settings: RouteSettings,
  id: string,
  config: Config,
  systemCaFile: string,
  problems: Problem[],
): PlacedTcpRoute[] {
  const target = connectAuthority(settings.from);
  const authority = `${target.host}:${target.port}`;
  const clusterName = `route-${id}`;
  const route: IRRoute = {
    id,
    name: settings.name ?? clusterName,
    sourcePath: settings.source_path,
    match: { kind: 'prefix', value: '/' },
    authorityRegex: undefined,
    // The bastion form's URL port is where clients dial; the plain form's is the CONNECT's port.
    ...(settings.from.pathname.replace(/^\/|\/$/g, '') === '' ? {} : fromPort(settings.from)),
    clusterName,
    // A tunnel lasts as long as its client wants: no request timeout, and no idle one unless set.
    timeoutMs: settings.timeout_ms ?? 0,
    idleTimeoutMs: settings.idle_timeout_ms ?? 0,
    prefixRewrite: undefined,
    regexRewrite: undefined,
    hostRewrite: { kind: 'preserve' },
    allowWebsockets: false,
    requestHeadersToSet: {},
    requestHeadersToRemove: [],
    responseHeadersToSet: {},
    public: settings.allow_public_unauthenticated_access,
    policy: assembleRoutePolicy(settings),
    // Headers end at Envoy: nothing reaches the upstream but the client's bytes.
    passIdentityHeaders: false,
    idpId: identityProviderFor(config, settings)?.id ?? NO_IDENTITY_PROVIDER,
    tcpAuthority: authority,
  };
  const own = placeHost(target.host);
  const placed: PlacedTcpRoute[] = [
    {
      vhost: own.vhost,
      domains: own.domains,
      route,
      cluster: tcpCluster(settings, clusterName, systemCaFile, problems),
    },
  ];
  if (settings.from_host !== target.host) {
    const dial = placeHost(settings.from_host);
    placed.push({ vhost: dial.vhost, domains: dial.domains, route, cluster: undefined });
  }
  return placed;
}

/**
 * The problem of a TCP route that an earlier one with the same CONNECT authority shadows (Envoy
 * takes the first route that matches).
 */
export function tcpShadowed(settings: RouteSettings, earlier: string): Problem {
  const target = connectAuthority(settings.from);
  return {
    path: settings.source_path,
    message: `never matches: ${earlier} comes first with the same TCP target (${target.host}:${target.port}), and Envoy takes the first route that matches; remove one`,
  };
}

/** The route's cluster of plain TCP endpoints; HTTP and gRPC health checks are problems. */
function tcpCluster(
  settings: RouteSettings,
  clusterName: string,
  systemCaFile: string,
  problems: Problem[],
): IRCluster {
  settings.health_checks.forEach((check, index) => {
    if (check.tcp === undefined)
      problems.push({
        path: `${settings.source_path}.health_checks[${index}]`,
        message: 'a TCP route takes tcp_health_check only (its upstream speaks no HTTP)',
      });
  });
  const healthChecks = settings.health_checks.filter((check) => check.tcp !== undefined);
  const cluster = buildCluster({ ...settings, health_checks: healthChecks }, clusterName, systemCaFile, []);
  return { ...cluster, tls: undefined, upstreamProtocol: 'tcp' };
}

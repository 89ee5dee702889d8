/**
 * Benchmark configs, written as block-style YAML text (as people write them) because
 * `yaml.stringify` of 10,000 routes takes seconds and the route-change benchmark writes a fresh file
 * per change.
 *
 * Every route has a unique host (`r<i>.bench.test`), two weighted upstreams (`,3` and `,1`) and
 * outlier detection, and is public (`allow_public_unauthenticated_access`), so Envoy answers without
 * a session. Bulk routes point at unique 127.x.y.z addresses on port 9, where nothing listens, so
 * nothing leaves the machine. Routes a benchmark requests ("live" routes) point at local echo
 * servers and carry an HTTP health check.
 */

/** Ports and addresses of one benchmark config (all loopback). */
export interface Listeners {
  /** Envoy's HTTP listener, `127.0.0.1:<port>`. */
  readonly address: string;
  /** Portcullis's gRPC port (ADS and ext_authz). */
  readonly grpcAddress: string;
  /** Envoy's admin port. */
  readonly adminAddress: string;
}

/** How one route is written. */
export interface RouteOptions {
  /** An HTTP health check (`/healthz`, every 30 s) on both upstreams. */
  readonly healthCheck: boolean;
}

/** The two upstream addresses of bulk route `index`: unique per route, on loopback, port 9. */
export function bulkTargets(index: number): [string, string] {
  const second = 1 + ((index >> 14) & 127);
  const third = (index >> 6) & 255;
  const fourth = (index & 63) * 2 + 2;
  return [`127.${second}.${third}.${fourth}:9`, `127.${second}.${third}.${fourth + 1}:9`];
}

/** Host of generated route `index`. */
export function routeHost(index: number): string {
  return `r${index}.bench.test`;
}

/** YAML for one route to `targets` (`host:port`, weights 3 and 1). */
export function routeYaml(host: string, targets: readonly [string, string], options: RouteOptions): string {
  const healthCheck = [
    `    health_checks:`,
    `      - timeout: 1s`,
    `        interval: 30s`,
    `        unhealthy_threshold: 2`,
    `        healthy_threshold: 1`,
    `        http_health_check:`,
    `          path: /healthz`,
  ];
  return [
    `  - from: https://${host}`,
    `    to:`,
    `      - http://${targets[0]},3`,
    `      - http://${targets[1]},1`,
    ...(options.healthCheck ? healthCheck : []),
    `    outlier_detection:`,
    `      consecutive_5xx: 5`,
    `      interval: 10s`,
    `      base_ejection_time: 30s`,
    `      max_ejection_percent: 50`,
    `    allow_public_unauthenticated_access: true`,
    '',
  ].join('\n');
}

/** YAML chunks of `count` bulk routes (`r0` .. `r<count-1>`), for callers that then edit some. */
export function bulkRoutes(count: number, options: RouteOptions): string[] {
  return Array.from({ length: count }, (_, index) =>
    routeYaml(routeHost(index), bulkTargets(index), options),
  );
}

/** The top of a config file: plain HTTP listener, loopback ports, quiet logs. */
export function headerYaml(listeners: Listeners): string {
  return [
    'insecure_server: true',
    `address: ${listeners.address}`,
    `grpc_address: ${listeners.grpcAddress}`,
    `envoy_admin_address: ${listeners.adminAddress}`,
    'log_level: warn',
    '',
  ].join('\n');
}

/** A whole config: the header, `extra` top-level YAML, then the route chunks (`routes: []` if none). */
export function configYaml(listeners: Listeners, routes: readonly string[], extra = ''): string {
  const body = routes.length === 0 ? 'routes: []\n' : `routes:\n${routes.join('')}`;
  return `${headerYaml(listeners)}${extra}${body}`;
}

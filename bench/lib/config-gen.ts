/**
 * Benchmark configs: N routes of the shape the performance targets name, written as YAML text
 * directly (block style, as people write it) because `yaml.stringify` of 10,000 routes takes
 * seconds and the change-to-serving benchmark writes a fresh file per iteration.
 *
 * Each route has two weighted upstreams (`http://<ip>:<port>,3` and `,1`), one HTTP health check and
 * outlier detection. Upstream IPs are unique per route. The compile benchmark uses 10.x addresses
 * (never contacted); anything that runs Envoy uses 127.x addresses so health checks stay on
 * loopback and are refused at once.
 */
export interface RouteShape {
  /** First octet of upstream addresses: 10 (compile only) or 127 (a real Envoy will connect). */
  readonly network: 10 | 127;
  readonly upstreamPort: number;
  /** Health check interval; the Envoy benchmarks use a long one so 20,000 checked hosts stay quiet. */
  readonly healthCheckInterval: string;
  /**
   * Spreads each cluster's first health check over this long. Envoy opens a socket per checked host
   * at once when clusters arrive, and 20,000 at once exceeds this machine's open-file limit (20,000)
   * and crashes Envoy; routes whose change is being timed are written without it.
   */
  readonly healthCheckInitialJitter?: string;
  /**
   * `allow_public_unauthenticated_access: true`: requests pass without a session. The Envoy
   * benchmarks need a 200 from the upstream, which ext_authz would otherwise refuse.
   */
  readonly public?: boolean;
}

export const COMPILE_SHAPE: RouteShape = { network: 10, upstreamPort: 8080, healthCheckInterval: '5s' };

/** Settings shared by every generated config (ports are filled in by the harness). */
export interface BaseSettings {
  readonly address: string;
  readonly grpcAddress?: string;
  readonly adminAddress?: string;
}

/** The two upstream addresses of route `index`: unique, deterministic. */
export function upstreamIps(index: number, network: 10 | 127): [string, string] {
  const second = network === 127 ? 1 + ((index >> 14) & 127) : (index >> 14) & 255;
  const third = (index >> 6) & 255;
  const fourth = (index & 63) * 2 + 2;
  return [`${network}.${second}.${third}.${fourth}`, `${network}.${second}.${third}.${fourth + 1}`];
}

/** YAML for one route in the benchmark shape, to `targets` (`host:port` pairs, weights 3 and 1). */
export function routeYaml(host: string, targets: readonly [string, string], shape: RouteShape): string {
  return [
    `  - from: https://${host}`,
    `    to:`,
    `      - http://${targets[0]},3`,
    `      - http://${targets[1]},1`,
    `    health_checks:`,
    `      - timeout: 1s`,
    `        interval: ${shape.healthCheckInterval}`,
    ...(shape.healthCheckInitialJitter === undefined
      ? []
      : [`        initial_jitter: ${shape.healthCheckInitialJitter}`]),
    `        unhealthy_threshold: 2`,
    `        healthy_threshold: 1`,
    `        http_health_check:`,
    `          path: /healthz`,
    `    outlier_detection:`,
    `      consecutive_5xx: 5`,
    `      interval: 10s`,
    `      base_ejection_time: 30s`,
    `      max_ejection_percent: 50`,
    ...(shape.public === true ? ['    allow_public_unauthenticated_access: true'] : []),
    '',
  ].join('\n');
}

/** Host of generated route `index`. */
export function routeHost(index: number): string {
  return `r${index}.bench.test`;
}

/** YAML of the generated route `index`. */
export function generatedRouteYaml(index: number, shape: RouteShape): string {
  const [a, b] = upstreamIps(index, shape.network);
  return routeYaml(routeHost(index), [`${a}:${shape.upstreamPort}`, `${b}:${shape.upstreamPort}`], shape);
}

/** The top of the config file: plain HTTP listener, loopback ports, quiet logs. */
export function headerYaml(base: BaseSettings): string {
  const lines = ['insecure_server: true', `address: ${base.address}`, 'log_level: warn'];
  if (base.grpcAddress !== undefined) lines.push(`grpc_address: ${base.grpcAddress}`);
  if (base.adminAddress !== undefined) lines.push(`envoy_admin_address: ${base.adminAddress}`);
  return `${lines.join('\n')}\n`;
}

/**
 * A whole config: header, then `routes` (YAML chunks from `generatedRouteYaml`/`routeYaml`).
 * With no routes it writes `routes: []`.
 */
export function configYaml(base: BaseSettings, routes: readonly string[]): string {
  return routes.length === 0
    ? `${headerYaml(base)}routes: []\n`
    : `${headerYaml(base)}routes:\n${routes.join('')}`;
}

/** The N generated routes' YAML chunks (computed once and reused by callers that edit one). */
export function generatedRoutes(count: number, shape: RouteShape): string[] {
  return Array.from({ length: count }, (_, index) => generatedRouteYaml(index, shape));
}

/** A JWKS of realistic size (one P-256 key) for benchmarks that compile authorization in. */
export const BENCH_JWKS = JSON.stringify({
  keys: [
    {
      kty: 'EC',
      crv: 'P-256',
      x: 'x'.repeat(43),
      y: 'y'.repeat(43),
      kid: 'k'.repeat(43),
      alg: 'ES256',
      use: 'sig',
    },
  ],
});

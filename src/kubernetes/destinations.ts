/**
 * A route's `to` from its resolved backends: the ready endpoints, weighted when several backends
 * share the traffic. With no ready endpoint at all it is `[]`: the route keeps its id, its policy
 * and its (empty) EDS cluster and answers 503 until an endpoint is ready, so scaling from zero,
 * like any scale-up or rolling restart, changes EDS only.
 */

/** One backend's ready endpoint URLs and its share of the traffic. */
export interface WeightedBackend {
  readonly urls: readonly string[];
  readonly weight: number;
}

/** Largest per-endpoint weight written when splitting exactly would need more. */
const WEIGHT_SCALE_LIMIT = 1_000_000;

/** The `to` of a route whose backends are `backends` (see the module comment). */
export function destinationUrls(backends: readonly WeightedBackend[]): string[] {
  const live = backends.filter((backend) => backend.urls.length > 0 && backend.weight > 0);
  if (live.length <= 1) return [...(live[0]?.urls ?? [])];
  return splitWeights(live);
}

/**
 * Per-endpoint weights (`url,N`) so each backend gets its share whatever its endpoint count:
 * weight * L / endpoints, with L the least common multiple of the counts, rounded (never below 1)
 * when that would exceed WEIGHT_SCALE_LIMIT.
 */
function splitWeights(backends: readonly WeightedBackend[]): string[] {
  const common = backends.reduce((sofar, backend) => lcm(sofar, backend.urls.length), 1);
  const largest = Math.max(...backends.map((backend) => backend.weight));
  const scale = common * largest <= WEIGHT_SCALE_LIMIT ? common : WEIGHT_SCALE_LIMIT / largest;
  return backends.flatMap((backend) => {
    const each = Math.max(1, Math.round((backend.weight * scale) / backend.urls.length));
    return backend.urls.map((url) => `${url},${each}`);
  });
}

function lcm(a: number, b: number): number {
  return (a / gcd(a, b)) * b;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

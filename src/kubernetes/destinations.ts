/**
 * A route's destination keys from its resolved backends: `to` with the ready endpoints (weighted
 * when several backends share the traffic), or, with no ready endpoint at all, a `response` of 503
 * so the route still exists and still applies its policy. The config format has no "cluster with
 * no endpoints yet"; the 503 answer changes the route's id once when the first endpoint appears
 * (the route then forwards), and after that a scale-up or rolling restart changes EDS only.
 */
import { answeringOptions } from './annotations.js';

/** One backend's ready endpoint URLs and its share of the traffic. */
export interface WeightedBackend {
  readonly urls: readonly string[];
  readonly weight: number;
}

/** Largest per-endpoint weight written when splitting exactly would need more. */
const WEIGHT_SCALE_LIMIT = 1_000_000;

/**
 * The `to` or `response` key of a route, plus `options` (forwarding options only when it forwards).
 * `unready` describes backends without ready endpoints for the 503 body.
 */
export function destinationKeys(
  backends: readonly WeightedBackend[],
  unready: readonly string[],
  options: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const live = backends.filter((backend) => backend.urls.length > 0 && backend.weight > 0);
  if (live.length === 0) {
    const body = unready.length === 0 ? 'no backend takes traffic' : unready.join('; ');
    return { response: { status: 503, body: `${body}\n` }, ...answeringOptions(options) };
  }
  if (live.length === 1) return { to: [...(live[0]?.urls ?? [])], ...options };
  return { to: splitWeights(live), ...options };
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

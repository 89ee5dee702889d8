import type { IR, IRVirtualHost } from '../../ir/types.js';
import { authenticateHost } from './own-http.js';

/**
 * How the listener receives its routes:
 *
 * - `per-host`: scoped RDS keyed by the request's host. Each host's virtual host is a small
 *   RouteConfiguration named by its own scope, so changing one route makes Envoy rebuild one
 *   small table instead of every route (at 10,000 routes a full rebuild alone takes Envoy about
 *   200 ms).
 * - `single`: one RouteConfiguration with every virtual host, fetched over RDS.
 *
 * Envoy looks scopes up by exact key, with no fallback, so per-host delivery is only used when
 * every virtual host is one exact host name: a wildcard (`*.example.com`, `example.*`, or the
 * catch-all of other patterns) needs Envoy's own domain matching across hosts, and an empty table
 * needs no scopes. The key is the part of `:authority` before the first `:` (the port is kept,
 * listener.ts), so a host with a colon of its own (an IPv6 literal) is not a scope key either.
 * The authenticate host, when Envoy serves it, gets a scope like any other host.
 */
export type RouteScoping = 'per-host' | 'single';

/** Picks the delivery for an IR; pure, so compile stays deterministic. */
export function routeScoping(ir: IR): RouteScoping {
  if (ir.virtualHosts.length === 0) return 'single';
  for (const vhost of ir.virtualHosts) if (!isExactHost(vhost)) return 'single';
  if (authenticateHost(ir)?.includes(':') === true) return 'single';
  return 'per-host';
}

/** Whether a virtual host is one exact host name, which a scope can key (see RouteScoping). */
export function isExactHost(vhost: IRVirtualHost): boolean {
  if (vhost.domains.length !== 1) return false;
  const host = vhost.domains[0] as string;
  return !host.includes('*') && !host.includes(':');
}

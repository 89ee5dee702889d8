/**
 * How a route's `from` host becomes Envoy virtual-host domains. Envoy matches exact domains and a
 * single leading (`*.example.com`) or trailing (`example.*`) wildcard natively and fast; any other
 * wildcard shape goes to one catch-all virtual host and is matched on `:authority` with an
 * anchored RE2, so `*.example.com` never matches `example.com` itself. The connection manager
 * keeps the port the client sent, so that RE2 allows an optional `:port` after the host.
 */
import { CATCH_ALL_VHOST } from '../ir/types.js';

export { CATCH_ALL_VHOST };

export interface HostPlacement {
  /** Virtual host the route belongs to. */
  readonly vhost: string;
  readonly domains: readonly string[];
  readonly authorityRegex: string | undefined;
}

/** Places a lower-cased `from` hostname (no port: virtual hosts match ignoring the request's port). */
export function placeHost(hostname: string): HostPlacement {
  const host = hostname.toLowerCase();
  // Most hosts have no wildcard: no split (an array per route) to count none.
  if (!host.includes('*')) return { vhost: host, domains: [host], authorityRegex: undefined };
  // Every host: the catch-all virtual host, which also holds the hosts matched by :authority
  // regex (Envoy permits one `*` domain); assembleHosts puts those regex routes first.
  if (host === '*') return { vhost: CATCH_ALL_VHOST, domains: ['*'], authorityRegex: undefined };
  const stars = host.split('*').length - 1;
  if (stars === 0) return { vhost: host, domains: [host], authorityRegex: undefined };
  if (stars === 1 && (host.startsWith('*') || host.endsWith('*'))) {
    return { vhost: host, domains: [host], authorityRegex: undefined };
  }
  const regex = host
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/:]+');
  return { vhost: CATCH_ALL_VHOST, domains: ['*'], authorityRegex: `^${regex}(:[0-9]+)?$` };
}

/**
 * IRRoute.fromPort of a route whose `from` URL names a port (a default port is no port: the URL
 * spells none), as a spread; nothing otherwise.
 */
export function fromPort(from: URL): { readonly fromPort?: number } {
  return from.port === '' ? {} : { fromPort: Number(from.port) };
}

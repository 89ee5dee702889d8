/**
 * Destinations a route must not forward to unless it says so (`allow_restricted_upstream`): the
 * link-local ranges, where clouds serve instance metadata and credentials (169.254.169.254,
 * fe80::/10, AWS's fd00:ec2::254, Alibaba's 100.100.100.200, GCE's metadata names), and
 * Portcullis's own gRPC, metrics and Envoy admin addresses. A route there would let anyone the
 * policy admits read cloud credentials or drive the control plane, so it is an error, not a
 * warning; an operator who really means it opts in on that route.
 */
import { BlockList, isIP } from 'node:net';
import type { ParsedValues } from './parsed-values.js';
import type { RouteSettings, WeightedUrl } from './types.js';
import type { Reader } from './value-readers.js';

/** The route option that lets a route forward to a restricted destination. */
export const ALLOW_RESTRICTED_UPSTREAM = 'allow_restricted_upstream';

const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata']);

/** The settings naming addresses Portcullis itself listens on. */
const OWN_ADDRESS_KEYS = ['grpc_address', 'envoy_admin_address', 'metrics_address'] as const;

function restrictedRanges(): BlockList {
  const list = new BlockList();
  list.addSubnet('169.254.0.0', 16, 'ipv4');
  list.addAddress('100.100.100.200', 'ipv4');
  list.addSubnet('fe80::', 10, 'ipv6');
  list.addAddress('fd00:ec2::254', 'ipv6');
  return list;
}

/**
 * Reports, at each `to` entry, a destination that is link-local, a metadata service, or one of
 * Portcullis's own listening addresses, unless the route sets `allow_restricted_upstream: true`.
 */
export function checkUpstreamTargets(
  reader: Reader,
  values: ParsedValues,
  routes: readonly RouteSettings[],
): void {
  const candidates = routes.filter((route) => route.to.length > 0 && !route.allow_restricted_upstream);
  if (candidates.length === 0) return;
  const ranges = restrictedRanges();
  const own = OWN_ADDRESS_KEYS.flatMap((key) => {
    const address = values.get<string>(key);
    return address === undefined ? [] : [{ key, ...splitAddress(address) }];
  });
  for (const route of candidates) {
    route.to.forEach((destination, index) => {
      const reason = restrictedReason(destination, ranges, own);
      if (reason === undefined) return;
      const path = route.to.length === 1 ? `${route.source_path}.to` : `${route.source_path}.to[${index}]`;
      reader.problem(
        path,
        `"${destination.href}" ${reason}; set ${ALLOW_RESTRICTED_UPSTREAM}: true on this route if it really must forward there`,
      );
    });
  }
}

interface OwnAddress {
  readonly key: string;
  readonly host: string;
  readonly port: number;
}

function restrictedReason(
  destination: WeightedUrl,
  ranges: BlockList,
  own: readonly OwnAddress[],
): string | undefined {
  // h2c:// and tcp:// are not special schemes: their host is opaque text (0xa9fea9fe stays as
  // written, yet resolvers read it as an IPv4 address). Read it as an http URL's host instead.
  const host = hostOf(destination.url);
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(bare);
  // The URL parser writes IPv4 in dotted decimal, so most addresses skip BlockList (2-3 us a call,
  // 30 ms at 10,000 routes) by their first two octets.
  const candidate = family === 6 || (family === 4 && /^(169\.254|100\.100)\./.test(bare));
  if (candidate && ranges.check(bare, family === 4 ? 'ipv4' : 'ipv6'))
    return 'is a link-local or cloud metadata address (instance credentials live there)';
  if (family === 0 && METADATA_NAMES.has(bare.replace(/\.$/, '')))
    return 'is a cloud metadata service name (instance credentials live there)';
  const ownMatch = own.find(
    (address) => address.port === destination.port && sameListener(address.host, bare, family),
  );
  if (ownMatch !== undefined)
    return `is Portcullis's own ${ownMatch.key} (${ownMatch.host || '*'}:${ownMatch.port}), which must never be reachable through a route`;
  return undefined;
}

function hostOf(url: URL): string {
  if (url.protocol === 'http:' || url.protocol === 'https:') return url.hostname;
  try {
    return new URL(`http://${url.host}/`).hostname;
  } catch {
    return url.hostname;
  }
}

/** Whether a destination host reaches a listener bound to `listenHost` (empty or 0.0.0.0: all). */
function sameListener(listenHost: string, host: string, family: number): boolean {
  const local = host === 'localhost' || host.endsWith('.localhost') || isLocalIp(host, family);
  if (listenHost === '' || listenHost === '0.0.0.0' || listenHost === '::') return local;
  const listen = listenHost.replace(/^\[(.*)\]$/, '$1');
  if (isLocalIp(listen, isIP(listen))) return local;
  return listen.toLowerCase() === host.toLowerCase();
}

function isLocalIp(host: string, family: number): boolean {
  if (family === 4) return host.startsWith('127.') || host === '0.0.0.0';
  return family === 6 && (host === '::1' || host === '::');
}

function splitAddress(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  return {
    host: address.slice(0, colon).replace(/^\[(.*)\]$/, '$1'),
    port: Number(address.slice(colon + 1)),
  };
}

/**
 * Which configured route a URL reaches, decided as Envoy decides it (compile: route-configuration.ts
 * and listener.ts), so sign-in only ever redirects to a URL that Envoy would route: no open
 * redirect. Virtual hosts are chosen by the host name (port ignored, trailing dot dropped,
 * case-insensitive): an exact domain first, then `*.suffix` wildcards longest first, then
 * `prefix.*` wildcards longest first, then `*`; only that virtual host's routes are tried, first
 * match wins (a route's `:authority` regex and then its path matcher). Operator regexes run with
 * RE2 (shared/re2.ts, linear time), never with JavaScript's backtracking RegExp.
 *
 * Envoy ignores the port when it picks a virtual host, so a host name alone does not say where
 * Portcullis is. The origins it serves a route on are the route's host name with: the listener's
 * scheme (https, or http on a plain listener) and port; that scheme and the port `from` names (a
 * port a load balancer forwards); and the authenticate URL's scheme and port, which name the same
 * listener as users reach it (a load balancer that maps 443 or terminates TLS). Sign-in hands
 * sessions only to those origins, never to a scheme or port a URL or Host header merely names.
 */
import { OWN_PATH_PREFIX } from '../contract/endpoints.js';
import { fewChanges } from '../shared/few-changes.js';
import type { IR, IRRoute, IRVirtualHost } from '../ir/types.js';
import { compileRe2 } from '../shared/re2.js';
import type { LocatedRoute, RouteLocator } from './http/types.js';

/** One route compiled: its matchers, as Envoy matches them. */
export interface CompiledRoute {
  readonly route: IRRoute;
  /** The route's `:authority` regex (true when it has none). */
  readonly authority: (host: string) => boolean;
  readonly path: (path: string) => boolean;
}

/**
 * One virtual host compiled: its lower-cased domains and its routes' matchers, with the IR
 * virtual host it was compiled from (compared by identity by the next build's locator).
 */
export interface CompiledHost {
  readonly vhost: IRVirtualHost;
  readonly domains: readonly string[];
  readonly routes: readonly CompiledRoute[];
}

/** A RouteLocator with what it compiled, which the next build's locator may reuse. */
export interface CompiledRouteLocator extends RouteLocator {
  readonly hosts: readonly CompiledHost[];
  /** How it picks a host by name: what the next build's locator patches (see `createRouteLocator`). */
  readonly index: HostIndex;
}

/**
 * The virtual hosts of one IR by domain, as Envoy picks them: exact domains (the first host in
 * config order that names one), `*.suffix` and `prefix.*` wildcards longest first (config order
 * among equal lengths), and the first `*`.
 */
export interface HostIndex {
  /** The IR indexed (compared by identity with `HostChanges.base`). */
  readonly ir: IR;
  readonly hosts: readonly CompiledHost[];
  readonly exact: ReadonlyMap<string, readonly CompiledRoute[]>;
  readonly suffixes: readonly Wildcard[];
  readonly prefixes: readonly Wildcard[];
  readonly fallback: readonly CompiledRoute[] | undefined;
  /** No exact domain is named twice (by two hosts or one twice): only then can the index be patched. */
  readonly exactUnique: boolean;
}

/**
 * The virtual hosts a build changed, added or removed (by name) relative to the IR `base`
 * (runtime's `BuildChanges`, which this folder cannot import): every other host of the new IR is
 * the very object `base` holds.
 */
export interface HostChanges {
  readonly base: IR;
  readonly virtualHosts: ReadonlySet<string>;
}

/** A wildcard domain without its `*`, with the routes of the host that names it. */
export interface Wildcard {
  readonly affix: string;
  readonly routes: readonly CompiledRoute[];
}

/**
 * A RouteLocator over `ir`. Build one per accepted IR (it compiles every regex once); pure
 * otherwise. The authenticate host (`ir.authorize.authenticateUrl`) locates no route: Envoy gives
 * it its own exact virtual host, which wins over any wildcard. A URL under `/.portcullis/` on a
 * route host locates the route its path would reach or, when none does (Envoy sends those paths
 * to Portcullis on every route host), the host's first route. A TCP route matches no path, so a
 * TCP route's host (and a bastion host, where translate places its TCP routes too) locates its
 * first route only under `/.portcullis/`: programmatic login and the handoff work there, and
 * nothing else redirects to it. A located route carries the origins it is served on for the URL's
 * host name, whatever scheme and port the URL itself has.
 *
 * `previous` (the last build's locator) lends what it compiled: a virtual host that is the very
 * object it was compiled from keeps its matchers (compiling is a function of the host alone), so
 * a reload compiles only the hosts it changed and the result is what a locator from scratch gives.
 * With `changes` whose `base` is the IR `previous` was built from, the exact-domain map is
 * `previous`'s copied and patched for the named hosts only (`patchedIndex`); the map's iteration
 * order then differs from a full build's, which nothing reads (it is only looked up).
 */
export function createRouteLocator(
  ir: IR,
  previous?: CompiledRouteLocator,
  changes?: HostChanges,
): CompiledRouteLocator {
  const index =
    (previous !== undefined &&
    changes !== undefined &&
    changes.base === previous.index.ir &&
    previous.index.exactUnique &&
    fewChanges(changes.virtualHosts.size, previous.hosts.length)
      ? patchedIndex(ir, previous, changes.virtualHosts)
      : undefined) ?? fullIndex(ir, previous);
  return locatorOver(ir, index);
}

/** Every host's domains indexed afresh (a host `previous` compiled from the same object is lent). */
function fullIndex(ir: IR, previous: CompiledRouteLocator | undefined): HostIndex {
  const exact = new Map<string, readonly CompiledRoute[]>();
  const suffixes: Wildcard[] = [];
  const prefixes: Wildcard[] = [];
  let fallback: readonly CompiledRoute[] | undefined;
  let exactUnique = true;
  const hosts: CompiledHost[] = [];
  const lent = previous === undefined ? undefined : hostFinder(previous.hosts);
  for (const [index, vhost] of ir.virtualHosts.entries()) {
    const host = lent?.(vhost, index) ?? compileHost(vhost);
    hosts.push(host);
    const { routes } = host;
    for (const domain of host.domains) {
      if (domain === '*') fallback ??= routes;
      else if (domain.startsWith('*')) suffixes.push({ affix: domain.slice(1), routes });
      else if (domain.endsWith('*')) prefixes.push({ affix: domain.slice(0, -1), routes });
      else if (!exact.has(domain)) exact.set(domain, routes);
      else exactUnique = false;
    }
  }
  suffixes.sort((a, b) => b.affix.length - a.affix.length);
  prefixes.sort((a, b) => b.affix.length - a.affix.length);
  return { ir, hosts, exact, suffixes, prefixes, fallback, exactUnique };
}

/**
 * `previous`'s index with the hosts named in `names` compiled again from `ir` (the others are
 * `previous`'s very objects, in the same relative order) and the named hosts `ir` lacks dropped:
 * a copy of the exact-domain map plus the named hosts. Undefined (index in full) when that could
 * not be exact: a named host, old or new, has a wildcard domain (their order is by length, then
 * config order), a domain two hosts share (the first one in config order wins), or a host not
 * named is not `previous`'s own.
 */
function patchedIndex(
  ir: IR,
  previous: CompiledRouteLocator,
  names: ReadonlySet<string>,
): HostIndex | undefined {
  const was = previous.index;
  const exact = new Map(was.exact);
  for (const host of previous.hosts) {
    if (!names.has(host.vhost.name)) continue;
    for (const domain of host.domains) {
      if (isWildcard(domain)) return undefined;
      exact.delete(domain);
    }
  }
  const hosts: CompiledHost[] = [];
  let next = 0;
  for (const vhost of ir.virtualHosts) {
    if (!names.has(vhost.name)) {
      while (next < previous.hosts.length && names.has((previous.hosts[next] as CompiledHost).vhost.name))
        next++;
      const host = previous.hosts[next++];
      if (host?.vhost !== vhost) return undefined;
      hosts.push(host);
      continue;
    }
    const host = compileHost(vhost);
    hosts.push(host);
    for (const domain of host.domains) {
      if (isWildcard(domain) || exact.has(domain)) return undefined;
      exact.set(domain, host.routes);
    }
  }
  return { ...was, ir, hosts, exact };
}

function isWildcard(domain: string): boolean {
  return domain.startsWith('*') || domain.endsWith('*');
}

/** The locator over one index (see `createRouteLocator`). */
function locatorOver(ir: IR, index: HostIndex): CompiledRouteLocator {
  const { exact, suffixes, prefixes, fallback } = index;
  const authenticateHost = hostOf(ir.authorize.authenticateUrl);
  const scheme = ir.listener.tls === undefined ? 'http:' : 'https:';
  const front = frontOf(ir.authorize.authenticateUrl);
  /**
   * The origins `route` is served on under `host`, where users come from first: `from`'s port,
   * then the authenticate URL's scheme and port (the same listener's public face, as a load
   * balancer that terminates TLS or maps 443 shows it), then the listener's own.
   */
  const originsOf = (route: IRRoute, host: string): string[] => {
    const candidates = [
      ...(route.fromPort === undefined ? [] : [`${scheme}//${host}:${route.fromPort}`]),
      ...(front === undefined ? [] : [`${front.scheme}//${host}:${front.port}`]),
      `${scheme}//${host}:${ir.listener.port}`,
    ];
    return [...new Set(candidates.map((origin) => new URL(origin).origin))];
  };

  const vhostRoutes = (host: string): readonly CompiledRoute[] | undefined =>
    exact.get(host) ??
    suffixes.find((w) => host.endsWith(w.affix) && host.length > w.affix.length)?.routes ??
    prefixes.find((w) => host.startsWith(w.affix) && host.length > w.affix.length)?.routes ??
    fallback;

  return {
    hosts: index.hosts,
    index,
    locate(url: URL): LocatedRoute | undefined {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
      if (url.username !== '' || url.password !== '') return undefined;
      const host = url.hostname.toLowerCase().replace(/\.$/, '');
      if (host === '' || host === authenticateHost) return undefined;
      const routes = vhostRoutes(host);
      if (routes === undefined) return undefined;
      const path = url.pathname.replace(/\/{2,}/g, '/');
      const candidates = routes.filter((r) => r.authority(host));
      const found =
        candidates.find((r) => r.path(path)) ??
        (path.startsWith(OWN_PATH_PREFIX) ? candidates[0] : undefined);
      if (found === undefined) return undefined;
      const origins = originsOf(found.route, host);
      return { routeId: found.route.id, idpId: found.route.idpId, origins, origin: origins[0] ?? '' };
    },
    serves(origin: URL): boolean {
      const host = origin.hostname.toLowerCase().replace(/\.$/, '');
      if (host === '' || host === authenticateHost || origin.username !== '' || origin.password !== '')
        return false;
      const routes = vhostRoutes(host)?.filter((r) => r.authority(host)) ?? [];
      return routes.some((r) => originsOf(r.route, host).includes(origin.origin));
    },
  };
}

/**
 * Finds the compiled entry of a virtual host object among `hosts`: at the same place first (a
 * reload mostly keeps the order), else through an index by object built on the first miss.
 */
function hostFinder(
  hosts: readonly CompiledHost[],
): (vhost: IRVirtualHost, index: number) => CompiledHost | undefined {
  let byObject: Map<IRVirtualHost, CompiledHost> | undefined;
  return (vhost, index) => {
    const there = hosts[index];
    if (there?.vhost === vhost) return there;
    byObject ??= new Map(hosts.map((host) => [host.vhost, host]));
    return byObject.get(vhost);
  };
}

function compileHost(vhost: IRVirtualHost): CompiledHost {
  return { vhost, domains: vhost.domains.map((value) => value.toLowerCase()), routes: compileRoutes(vhost) };
}

function compileRoutes(vhost: IRVirtualHost): readonly CompiledRoute[] {
  return vhost.routes.map((route) => ({
    route,
    authority: route.authorityRegex === undefined ? () => true : regexMatcher(route.authorityRegex),
    // A TCP route takes only CONNECTs, which have no path: it serves no URL (see createRouteLocator).
    path: route.tcpAuthority === undefined ? pathMatcher(route) : () => false,
  }));
}

/** Envoy's path matchers: case-sensitive prefix, exact path, or a full-match regex on the path. */
function pathMatcher(route: IRRoute): (path: string) => boolean {
  const { kind, value } = route.match;
  if (kind === 'prefix') return (path) => path.startsWith(value);
  if (kind === 'path') return (path) => path === value;
  return regexMatcher(value);
}

/**
 * An RE2 pattern as a full-match test, in linear time whatever the pattern (Envoy's `safe_regex`
 * semantics). A pattern RE2 refuses (validate reports those) matches nothing: a redirect it would
 * have allowed is refused, never the reverse.
 */
function regexMatcher(pattern: string): (value: string) => boolean {
  const compiled = compileRe2(pattern);
  if (!compiled.ok) return () => false;
  return (value) => compiled.pattern.fullMatch(value);
}

/** The scheme (`https:`) and effective port of the authenticate URL, when it is an http(s) URL. */
function frontOf(url: string | undefined): { scheme: string; port: string } | undefined {
  if (url === undefined) return undefined;
  try {
    const { protocol, port } = new URL(url);
    if (protocol !== 'http:' && protocol !== 'https:') return undefined;
    return { scheme: protocol, port: port !== '' ? port : protocol === 'https:' ? '443' : '80' };
  } catch {
    return undefined;
  }
}

function hostOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

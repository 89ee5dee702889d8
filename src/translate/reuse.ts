/**
 * What one translate hands the next so that a reload translates only the routes that changed
 * (translate.ts), and gives back the very same IR objects for the rest.
 *
 * Keys: parse's route cache gives back the identical `RouteSettings` object for a route whose place
 * and text did not change (config/parse-config.ts `RouteCache`, keyed by their SHA-256), so a
 * route's translation is keyed by that object plus `globalsKey`, a SHA-256 over everything else
 * translate reads (the Config without its routes, the system CA path, the authorize settings). No
 * content is hashed again per route: the key is derived from the parse cache's.
 */
import { fullHash } from '../shared/hash.js';
import type { Problem } from '../shared/errors.js';
import type { Config, RouteSettings } from '../config/types.js';
import {
  CATCH_ALL_VHOST,
  type IRAuthorize,
  type IRCluster,
  type IRRoute,
  type IRVirtualHost,
} from '../ir/types.js';
import type { RouteIdentity } from './route-identity.js';

/** One route's IR placed in a virtual host, with its cluster (none for one that answers itself). */
export interface TranslatedRoute {
  readonly vhost: string;
  readonly domains: readonly string[];
  readonly route: IRRoute;
  readonly cluster: IRCluster | undefined;
}

/** Everything translate made of one route's settings, apart from the checks across routes. */
export interface RouteOutcome {
  readonly identity: RouteIdentity;
  /** The host a TCP route's clients CONNECT to (its own virtual host); undefined for HTTP. */
  readonly tcpTarget: string | undefined;
  /** In IR order: a bastion-form TCP route is placed twice, other routes once. */
  readonly placed: readonly TranslatedRoute[];
  /** The route's own problems (its upstreams, its health checks); none in a memo. */
  readonly problems: readonly Problem[];
}

/**
 * What the next translate may reuse: the outcome of each route of this one by its settings object,
 * valid while `globals` is unchanged, and the IR's virtual hosts and clusters by name, in IR order.
 * Holds exactly one translate's entries. Opaque to the caller, who passes it back in.
 */
export interface RoutesMemo {
  readonly globals: string;
  readonly routes: ReadonlyMap<RouteSettings, RouteOutcome>;
  readonly hosts: ReadonlyMap<string, IRVirtualHost>;
  readonly clusters: ReadonlyMap<string, IRCluster>;
}

/**
 * The key of everything a route's translation reads besides its own settings: the Config without
 * its routes (secrets show only whether they are set, which is all translate reads of them), the
 * system CA bundle path and the authorize settings decision names depend on. One hash per pass.
 */
export function globalsKey(config: Config, systemCaFile: string, authorize: IRAuthorize): string {
  return fullHash(JSON.stringify([systemCaFile, authorize, { ...config, routes: [] }]));
}

/**
 * Routes (config order) grouped into virtual hosts by their `vhost` name, each host's routes in
 * config order (the catch-all's regex-host routes first: moreSpecificFirst); the hosts sorted by name, the catch-all last. A host whose routes are all the
 * identical objects of the same host in `previous` is that host object; when the host names are
 * the ones `previous` had, their order is taken from it instead of sorting again.
 */
export function assembleHosts(
  routes: readonly TranslatedRoute[],
  previous: ReadonlyMap<string, IRVirtualHost> | undefined,
): Map<string, IRVirtualHost> {
  const groups = new Map<string, { domains: readonly string[]; routes: IRRoute[] }>();
  for (const { vhost, domains, route } of routes) {
    const group = groups.get(vhost);
    if (group === undefined) groups.set(vhost, { domains, routes: [route] });
    else group.routes.push(route);
  }
  const catchAll = groups.get(CATCH_ALL_VHOST);
  if (catchAll !== undefined) catchAll.routes = moreSpecificFirst(catchAll.routes);
  const hosts = new Map<string, IRVirtualHost>();
  let known = 0;
  for (const [name, group] of groups) {
    const before = previous?.get(name);
    if (before !== undefined) known += 1;
    hosts.set(
      name,
      before !== undefined && sameItems(before.routes, group.routes)
        ? before
        : { name, domains: group.domains, routes: group.routes },
    );
  }
  return inOrder(hosts, previous, known, byHostName);
}

/**
 * The clusters of `routes` by name, sorted by name; in the order of `previous` when their names
 * are the ones it had (see assembleHosts).
 */
export function assembleClusters(
  routes: readonly TranslatedRoute[],
  previous: ReadonlyMap<string, IRCluster> | undefined,
): Map<string, IRCluster> {
  const clusters = new Map<string, IRCluster>();
  let known = 0;
  for (const { cluster } of routes) {
    if (cluster === undefined) continue;
    if (previous?.has(cluster.name) === true) known += 1;
    clusters.set(cluster.name, cluster);
  }
  return inOrder(clusters, previous, known, byCodeUnits);
}

/**
 * `items` in the key order of `previous` when it holds the same keys (`known` of them are in it),
 * else sorted by `order`.
 */
function inOrder<T>(
  items: Map<string, T>,
  previous: ReadonlyMap<string, unknown> | undefined,
  known: number,
  order: (a: string, b: string) => number,
): Map<string, T> {
  const keys =
    previous !== undefined && known === items.size && known === previous.size
      ? previous.keys()
      : [...items.keys()].sort(order);
  const sorted = new Map<string, T>();
  for (const key of keys) sorted.set(key, items.get(key) as T);
  return sorted;
}

/**
 * The catch-all host's routes with those of hosts matched by `:authority` regex (`a.*.example.com`)
 * before those of the every-host `*`, each in config order: a named host is more specific than
 * every host, as Envoy ranks domains, and a `*` route first would take every request.
 */
function moreSpecificFirst(routes: readonly IRRoute[]): IRRoute[] {
  return [
    ...routes.filter((route) => route.authorityRegex !== undefined),
    ...routes.filter((route) => route.authorityRegex === undefined),
  ];
}

/** Whether two lists hold the identical items in the same order. */
function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index += 1) if (a[index] !== b[index]) return false;
  return true;
}

/** Virtual hosts by name, the catch-all last. */
function byHostName(a: string, b: string): number {
  return a === CATCH_ALL_VHOST ? 1 : b === CATCH_ALL_VHOST ? -1 : byCodeUnits(a, b);
}

/** Ascending code-unit order (what `Array.prototype.sort` does by default), for names. */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

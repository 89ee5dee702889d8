import type { IRRoute, IRVirtualHost } from '../ir/types.js';
import { CATCH_ALL_VHOST } from './hosts.js';
import type { TranslatedRoute } from './route-changes.js';
import { IncrementalSorter } from '../shared/incremental-sorter.js';
import { stringOrder } from '../shared/string-order.js';

/** The host names of the last grouping, in order, which the next one that reuses routes starts from. */
const hostOrder = new IncrementalSorter();

/** Translated routes grouped into virtual hosts (see `groupHosts`). */
export interface GroupedHosts {
  /** Sorted by name, the catch-all last; each host's routes in config order. */
  readonly virtualHosts: IRVirtualHost[];
  /** The host made k-th (the k-th distinct host in config order) sits at `virtualHosts[hostBuildOrder[k]]`. */
  readonly hostBuildOrder: Int32Array;
}

/** An IR virtual host while its routes are gathered. */
interface HostInMaking {
  readonly name: string;
  readonly domains: readonly string[];
  routes: IRRoute[];
}

/**
 * Groups translated routes (config order) into virtual hosts by their `vhost` name. The hosts are
 * made in config order (the order of their first routes), so that their place in memory follows
 * the routes' (see `TranslateResult.hostBuildOrder`), and listed sorted by name.
 *
 * `fresh` says no route is an earlier translation's (a config parsed cold). Up to FEW_HOSTS distinct
 * names, a table by name groups the routes (it stays small and cached) and the names are sorted
 * alone (`stringOrder`). Past that, every route's host name goes through one radix sort, whose
 * runs of equal names are the hosts, already in order: at 10,000 hosts a table outgrows the cache,
 * and its 10,000 insertions, the sort of its keys and a lookup per sorted name cost more than the
 * one sort. A grouping that reuses routes keeps the table and sorts incrementally from the last
 * order (`IncrementalSorter`), which a reload that renamed no host passes through in one walk.
 */
export function groupHosts(routes: readonly TranslatedRoute[], fresh: boolean): GroupedHosts {
  if (!fresh) return groupByTable(routes, false, Infinity) as GroupedHosts;
  return groupByTable(routes, true, FEW_HOSTS) ?? groupSorted(routes);
}

/**
 * Up to how many distinct hosts a cold grouping uses a table: measured at 10,000 routes over 10
 * hosts, the radix sort of every route's name made translate 5-9 ms slower than the table, and at
 * 10,000 distinct hosts the table 5-7 ms slower than the sort. Low enough that a config of one
 * host per route takes the sort at 1,000 routes as at 10,000.
 */
const FEW_HOSTS = 256;

/** `groupHosts` for many new names: one radix sort of every route's host name. */
function groupSorted(routes: readonly TranslatedRoute[]): GroupedHosts {
  const count = routes.length;
  const names = new Array<string>(count);
  for (let i = 0; i < count; i++) names[i] = (routes[i] as TranslatedRoute).vhost;
  const order = stringOrder(names);
  // Each route's host, numbered in name order: equal names are adjacent in `order`. The catch-all
  // (if any route is in it) is numbered last.
  const hostOf = new Int32Array(count);
  const sortedNames: string[] = [];
  let catchAllRoutes = 0;
  for (let k = 0; k < count; k++) {
    const at = order[k] as number;
    const name = names[at] as string;
    if (name === CATCH_ALL_VHOST) {
      hostOf[at] = -1;
      catchAllRoutes++;
    } else {
      if (sortedNames.length === 0 || sortedNames[sortedNames.length - 1] !== name) sortedNames.push(name);
      hostOf[at] = sortedNames.length - 1;
    }
  }
  hostOrder.remember(sortedNames);
  const hostCount = sortedNames.length + (catchAllRoutes > 0 ? 1 : 0);
  const virtualHosts = new Array<IRVirtualHost>(hostCount);
  const hostBuildOrder = new Int32Array(hostCount);
  let made = 0;
  for (let i = 0; i < count; i++) {
    const route = routes[i] as TranslatedRoute;
    const place = hostOf[i] === -1 ? hostCount - 1 : (hostOf[i] as number);
    const host = virtualHosts[place] as HostInMaking | undefined;
    if (host === undefined) {
      virtualHosts[place] = newVirtualHost(route);
      hostBuildOrder[made++] = place;
    } else host.routes.push(route.route);
  }
  return { virtualHosts, hostBuildOrder };
}

/**
 * `groupHosts` by a table by name: the names sorted outright when `fresh`, else from the last
 * order. Undefined once more than `limit` distinct hosts turn up.
 */
function groupByTable(
  routes: readonly TranslatedRoute[],
  fresh: boolean,
  limit: number,
): GroupedHosts | undefined {
  const hostsMade: HostInMaking[] = [];
  const hostPlaces = new Map<string, number>();
  for (const route of routes) {
    const place = hostPlaces.get(route.vhost);
    if (place === undefined) {
      if (hostsMade.length === limit) return undefined;
      hostPlaces.set(route.vhost, hostsMade.length);
      hostsMade.push(newVirtualHost(route));
    } else (hostsMade[place] as HostInMaking).routes.push(route.route);
  }
  const catchAll = hostPlaces.get(CATCH_ALL_VHOST);
  hostPlaces.delete(CATCH_ALL_VHOST);
  const places = fresh ? sortedPlaces(hostPlaces) : hostOrder.sortedValues(hostPlaces);
  const virtualHosts = new Array<IRVirtualHost>(hostsMade.length);
  const hostBuildOrder = new Int32Array(hostsMade.length);
  for (let k = 0; k < places.length; k++) {
    const made = places[k] as number;
    virtualHosts[k] = hostsMade[made] as IRVirtualHost;
    hostBuildOrder[made] = k;
  }
  if (catchAll !== undefined) {
    virtualHosts[places.length] = hostsMade[catchAll] as IRVirtualHost;
    hostBuildOrder[catchAll] = places.length;
  }
  return { virtualHosts, hostBuildOrder };
}

/** The places of `hostPlaces` in the order of their names, sorted outright (and remembered). */
function sortedPlaces(hostPlaces: ReadonlyMap<string, number>): number[] {
  const names = [...hostPlaces.keys()];
  const places = [...hostPlaces.values()];
  const order = stringOrder(names);
  hostOrder.remember(Array.from(order, (at) => names[at] as string));
  return Array.from(order, (at) => places[at] as number);
}

/**
 * A host's IR virtual host, made when its first route arrives (its later routes are pushed on).
 * In a function of its own so that V8 pretenures these records, which live as long as the IR:
 * written inline in a loop, the literal was optimized before its allocation-site feedback showed
 * that its objects survive, and every record was born young and copied by the collections of a
 * cold 10,000-route build (seen with `%InYoungGeneration`).
 */
function newVirtualHost(first: TranslatedRoute): HostInMaking {
  return { name: first.vhost, domains: first.domains, routes: [first.route] };
}

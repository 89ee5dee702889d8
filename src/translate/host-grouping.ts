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
 * `fresh` says no route is an earlier translation's (a config parsed cold): the names are then
 * grouped and sorted in one radix sort (`stringOrder`), whose runs of equal names are the hosts.
 * That reads each name once. Grouping by a hash table and then sorting its keys cost, at 10,000
 * hosts, 10,000 insertions into a table that outgrows the cache, a comparison sort and a lookup per
 * sorted name. A grouping that reuses routes keeps the table and sorts incrementally from the last
 * order (`IncrementalSorter`), which a reload that renamed no host passes through in one walk.
 */
export function groupHosts(routes: readonly TranslatedRoute[], fresh: boolean): GroupedHosts {
  return fresh ? groupSorted(routes) : groupByTable(routes);
}

/** `groupHosts` for new names: one radix sort of every route's host name. */
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

/** `groupHosts` for routes an earlier translation made: a table by name, sorted from the last order. */
function groupByTable(routes: readonly TranslatedRoute[]): GroupedHosts {
  const hostsMade: HostInMaking[] = [];
  const hostPlaces = new Map<string, number>();
  for (const route of routes) {
    const place = hostPlaces.get(route.vhost);
    if (place === undefined) {
      hostPlaces.set(route.vhost, hostsMade.length);
      hostsMade.push(newVirtualHost(route));
    } else (hostsMade[place] as HostInMaking).routes.push(route.route);
  }
  const catchAll = hostPlaces.get(CATCH_ALL_VHOST);
  hostPlaces.delete(CATCH_ALL_VHOST);
  const places = hostOrder.sortedValues(hostPlaces);
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

import type { RouteSettings } from '../config/types.js';
import type { IRCluster, IRRoute, IRVirtualHost } from '../ir/types.js';
import { CATCH_ALL_VHOST } from './hosts.js';

/** One route's translation: everything derived from its settings alone (plus the route context). */
export interface TranslatedRoute {
  readonly id: string;
  /**
   * The id's leading 8 hex digits as a signed 32-bit number (`routeIdLead`), read while the id is
   * fresh so that sorting routes by id compares numbers instead of reading 10,000 id strings.
   */
  readonly idLead: number;
  readonly vhost: string;
  readonly domains: readonly string[];
  readonly route: IRRoute;
  readonly cluster: IRCluster;
}

/** A successful translation, kept so the next one can apply only what changed. */
export interface TranslatedRoutes {
  readonly context: string;
  readonly settings: readonly RouteSettings[];
  /** The translation of `settings[i]`. */
  readonly translated: readonly TranslatedRoute[];
  /** Sorted by name, the catch-all last (as the IR holds them). */
  readonly virtualHosts: readonly IRVirtualHost[];
  /** Sorted by name (as the IR holds them): one per route, named `route-<id>`, so by route id too. */
  readonly clusters: readonly IRCluster[];
}

/** At most this many changed routes go the incremental way; more is a rebuild anyway. */
const MAX_CHANGED = 256;

/**
 * The routes of `previous` with the few that changed in place (same count, same positions; what
 * an edit of a few routes in a long list gives) translated by `translateOne` and swapped in: the
 * virtual hosts they leave or join are rebuilt, the rest are the previous objects, and clusters
 * are replaced in the sorted list. Undefined when this does not apply or anything needs the full
 * translation's answer (a problem to report, a duplicate id), which the caller then runs. The
 * result equals the full translation of `settings` (test/unit/translate/route-changes.test.ts).
 */
export function applyRouteChanges(
  previous: TranslatedRoutes,
  settings: readonly RouteSettings[],
  context: string,
  translateOne: (route: RouteSettings) => TranslatedRoute | undefined,
): TranslatedRoutes | undefined {
  if (context !== previous.context || settings.length !== previous.settings.length) return undefined;
  const changed: number[] = [];
  for (let i = 0; i < settings.length; i++) {
    if (settings[i] !== previous.settings[i]) {
      changed.push(i);
      if (changed.length > MAX_CHANGED) return undefined;
    }
  }
  if (changed.length === 0) return previous;
  const translated = previous.translated.slice();
  const leaving: TranslatedRoute[] = [];
  const arriving: TranslatedRoute[] = [];
  for (const index of changed) {
    const next = translateOne(settings[index] as RouteSettings);
    if (next === undefined) return undefined;
    leaving.push(previous.translated[index] as TranslatedRoute);
    arriving.push(next);
    translated[index] = next;
  }
  // Ids: a new id may reuse one that left, but not one that stays or another new one. Each route
  // has one cluster, named by its id, in the sorted cluster list.
  const leavingIds = new Set(leaving.map((route) => route.id));
  const arrivingIds = new Set<string>();
  for (const route of arriving) {
    const taken = !leavingIds.has(route.id) && named(previous.clusters, route.cluster.name);
    if (taken || arrivingIds.has(route.id)) return undefined;
    arrivingIds.add(route.id);
  }
  return {
    context,
    settings,
    translated,
    virtualHosts: replaceHosts(previous.virtualHosts, translated, leaving, arriving),
    clusters: replaceClusters(previous.clusters, leaving, arriving),
  };
}

/** `hosts` with every host a changed route left or joined rebuilt from `translated` (config order). */
function replaceHosts(
  hosts: readonly IRVirtualHost[],
  translated: readonly TranslatedRoute[],
  leaving: readonly TranslatedRoute[],
  arriving: readonly TranslatedRoute[],
): IRVirtualHost[] {
  const affected = new Set([...leaving, ...arriving].map((route) => route.vhost));
  const rebuilt = new Map<string, { domains: readonly string[]; routes: IRRoute[] }>();
  for (const route of translated) {
    if (!affected.has(route.vhost)) continue;
    const host = rebuilt.get(route.vhost);
    if (host === undefined) rebuilt.set(route.vhost, { domains: route.domains, routes: [route.route] });
    else host.routes.push(route.route);
  }
  const out = withoutNamed(hosts, affected, CATCH_ALL_VHOST);
  for (const [name, host] of rebuilt) {
    const vhost: IRVirtualHost = { name, domains: host.domains, routes: host.routes };
    if (name === CATCH_ALL_VHOST) out.push(vhost);
    else out.splice(insertionPoint(out, name, CATCH_ALL_VHOST), 0, vhost);
  }
  return out;
}

/** `clusters` without the clusters of routes that left and with those of routes that arrived. */
function replaceClusters(
  clusters: readonly IRCluster[],
  leaving: readonly TranslatedRoute[],
  arriving: readonly TranslatedRoute[],
): IRCluster[] {
  const gone = new Set(leaving.map((route) => route.cluster.name));
  const out = withoutNamed(clusters, gone);
  for (const { cluster } of arriving) out.splice(insertionPoint(out, cluster.name), 0, cluster);
  return out;
}

/**
 * A copy of `items` (sorted by name, except an item named `last` at the end) without the items
 * named in `names`, each found by binary search: a few changed names cost a copy of the list, not
 * a set lookup per item.
 */
function withoutNamed<T extends { readonly name: string }>(
  items: readonly T[],
  names: ReadonlySet<string>,
  last?: string,
): T[] {
  const out = items.slice();
  for (const name of names) {
    const at = name === last ? out.length - 1 : insertionPoint(out, name, last);
    if (at >= 0 && out[at]?.name === name) out.splice(at, 1);
  }
  return out;
}

/** Whether `items` (sorted by name) holds an item named `name`. */
function named(items: readonly { readonly name: string }[], name: string): boolean {
  return items[insertionPoint(items, name)]?.name === name;
}

/** Where `name` goes in `items` sorted by name (code units), before any item named `last`. */
function insertionPoint(items: readonly { readonly name: string }[], name: string, last?: string): number {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const found = (items[middle] as { name: string }).name;
    if (found !== last && found < name) low = middle + 1;
    else high = middle;
  }
  return low;
}

import { radixOrder, settleTies } from '../shared/radix-order.js';

/**
 * Route ids in ascending order, for the two things a full translation needs them sorted for: the
 * cluster list (named `route-<id>`, so sorted by id) and the duplicate check (equal ids end up
 * side by side). A cold build of 10,000 routes used to do both with hash tables (a Map from id to
 * the first route with it, another by cluster name for the sorter): 40,000 insertions and lookups
 * whose cost per operation grows once the tables and the id strings outgrow the cache. Sorting
 * numbers gathered beforehand touches neither.
 */

/**
 * The leading 8 hex digits of a route id as a signed 32-bit number (what `TranslatedRoute.idLead`
 * holds: V8 keeps it a small integer, where an unsigned value above 2^31 would be a boxed number).
 * Route ids are always 16 lower-case hex digits (`routeId`), so the unsigned reading (`>>> 0`)
 * orders ids as their text does, up to ties.
 */
export function routeIdLead(id: string): number {
  let word = 0;
  for (let i = 0; i < 8; i++) {
    const code = id.charCodeAt(i);
    word = (word << 4) | (code <= 57 ? code - 48 : code - 87);
  }
  return word;
}

/**
 * The indexes 0..n-1 of n routes in ascending code-unit order of their ids, equal ids in index
 * order (a stable sort). `leads[i]` is route i's `routeIdLead`; `idOf(i)` reads its full id, which
 * only routes sharing a leading word (rare: one pair in ~10^5 at 10,000 routes) need. The indexes
 * are radix-sorted by the leading words, three counting passes over typed arrays: linear, stable,
 * and touching no route object.
 */
export function orderByRouteId(leads: Int32Array, idOf: (index: number) => string): Int32Array {
  const order = radixOrder([leads], leads.length);
  // Ids sharing a leading word are adjacent, in index order; only the rest of their text can
  // reorder them.
  settleTies(
    order,
    (a, b) => leads[a] === leads[b],
    (a, b) => {
      const first = idOf(a);
      const second = idOf(b);
      return first < second ? -1 : first > second ? 1 : a - b;
    },
  );
  return order;
}

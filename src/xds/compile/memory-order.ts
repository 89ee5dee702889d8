/**
 * `make(item)` for every item of a list sorted by name, called in the items' memory order (`order[i]`
 * is the place in `items` of the i-th item made, see `TranslateResult.clusterBuildOrder` and
 * `hostBuildOrder`), each result put at its item's place. The items and what they point at are
 * then read in the order they were written, not in the order of their names (at 10,000 routes a
 * cache miss each), and the results are written in that order too, which is the order the
 * snapshot then encodes them in.
 */
export function inMemoryOrder<S, T>(items: readonly S[], order: Int32Array, make: (item: S) => T): T[] {
  const out = new Array<T>(items.length);
  for (let i = 0; i < order.length; i++) {
    const at = order[i] as number;
    out[at] = make(items[at] as S);
  }
  return out;
}

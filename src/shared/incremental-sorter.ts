import { sortedStrings } from './string-order.js';

/**
 * Sorts names the way `[...names].sort()` would, reusing the previous call's sorted result: names
 * still present keep their order (one pass), new names are sorted alone and merged in. A reload
 * that changes a few of 10,000 names then costs a pass instead of a full sort. Each instance holds
 * its caller's last result.
 */
export class IncrementalSorter {
  private previous: readonly string[] = [];

  /**
   * `names` (distinct) in ascending code-unit order, as `Array.prototype.sort` orders strings,
   * starting from the last order (`sort`'s own, or one a caller sorted elsewhere and passed to
   * `remember`). A config parsed cold has only new names, which are better sorted outright (see
   * `stringOrder`): looking each previous name up would read every old string beside its new twin.
   */
  sort(names: ReadonlySet<string> | ReadonlyMap<string, unknown>): string[] {
    const kept: string[] = [];
    for (const name of this.previous) if (names.has(name)) kept.push(name);
    // Every name kept (a reload that renamed nothing), or none (a first sort): no per-name check
    // of what is new is needed.
    let added: string[];
    if (kept.length === names.size) added = [];
    else if (kept.length === 0) added = [...names.keys()];
    else {
      const known = new Set(kept);
      added = [];
      for (const name of names.keys()) if (!known.has(name)) added.push(name);
    }
    const merged = merge(kept, sortedStrings(added));
    this.previous = merged;
    return merged;
  }
  /**
   * The values of `entries` in the order `sort` gives their keys (incrementally, from the last
   * order), for callers that keep something beside each name.
   */
  sortedValues<T>(entries: ReadonlyMap<string, T>): T[] {
    return this.sort(entries).map((name) => entries.get(name) as T);
  }

  /** Takes `sorted` (names in ascending code-unit order, sorted elsewhere) as the last order. */
  remember(sorted: readonly string[]): void {
    this.previous = sorted;
  }
}

function merge(a: readonly string[], b: readonly string[]): string[] {
  if (b.length === 0) return [...a];
  const out: string[] = new Array<string>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length)
    out[k++] = (a[i] as string) < (b[j] as string) ? (a[i++] as string) : (b[j++] as string);
  while (i < a.length) out[k++] = a[i++] as string;
  while (j < b.length) out[k++] = b[j++] as string;
  return out;
}

import { radixOrder } from './radix-order.js';

/** Below this many names a comparison sort is as quick as the radix passes' fixed cost. */
const FEW_NAMES = 64;

/** Code units per key: two 32-bit words of four bytes. */
const UNITS_PER_KEY = 8;

/**
 * `names` in ascending code-unit order, as `[...names].sort()` returns them, without its n log n
 * string comparisons (see `stringOrder`). A cold build sorts every host name of the config: at
 * 10,000 hosts the comparison sort read ~130,000 pairs of strings spread over the heap (3-3.5 ms,
 * 0.17 ms at 1,000 hosts); this reads each name about once.
 */
export function sortedStrings(names: readonly string[]): string[] {
  const order = stringOrder(names);
  const sorted = new Array<string>(names.length);
  for (let k = 0; k < order.length; k++) sorted[k] = names[order[k] as number] as string;
  return sorted;
}

/**
 * The indexes of `names` in the order `sortedStrings` puts the names, equal names in index order
 * (stable): for callers that keep something beside each name (a route beside its host's name) and
 * want it in that order without looking each name up again.
 *
 * The names' first eight code units are packed into two 32-bit words and the indexes radix-sorted
 * by them (`radixOrder`); each run of names that tie on those units is sorted the same way by the
 * next eight, and so on, so names sharing a long prefix (`service-a.corp.example.com`,
 * `service-b.corp...`) or repeated many times (one host's many routes) cost a pass per eight units,
 * not a comparison sort. Small runs are compared in full. Host names are ASCII, so a code unit
 * above 0xff (which does not fit a byte of the key) sends the whole list to the comparison sort.
 */
export function stringOrder(names: readonly string[]): Int32Array {
  const order = new Int32Array(names.length);
  for (let i = 0; i < order.length; i++) order[i] = i;
  return sortRun(names, order, 0, order.length, 0) ? order : comparisonOrder(names);
}

/**
 * Sorts `order[from..to)` (indexes in ascending order, whose names agree on their first `depth`
 * code units) by the names' code units from `depth` on, stably. False when a code unit does not
 * fit a byte.
 */
function sortRun(
  names: readonly string[],
  order: Int32Array,
  from: number,
  to: number,
  depth: number,
): boolean {
  const count = to - from;
  if (count < 2) return true;
  if (count < FEW_NAMES) {
    order.set(Array.from(order.subarray(from, to)).sort(byName(names)), from);
    return true;
  }
  const high = new Int32Array(count);
  const low = new Int32Array(count);
  let longest = 0;
  let shortest = Infinity;
  for (let k = 0; k < count; k++) {
    const name = names[order[from + k] as number] as string;
    const first = packedUnits(name, depth);
    const second = packedUnits(name, depth + 4);
    if (first === undefined || second === undefined) return false;
    high[k] = first;
    low[k] = second;
    longest = Math.max(longest, name.length);
    shortest = Math.min(shortest, name.length);
  }
  if (longest <= depth) {
    // Every name ends before `depth`: all equal, unless they differ in length only by trailing
    // NULs the zero padding hid ("a" and "a\0"), which a comparison settles.
    if (shortest !== longest) order.set(Array.from(order.subarray(from, to)).sort(byName(names)), from);
    return true;
  }
  const local = radixOrder([high, low], count);
  const run = new Int32Array(count);
  for (let k = 0; k < count; k++) run[k] = order[from + (local[k] as number)] as number;
  order.set(run, from);
  for (let start = 0; start < count; ) {
    const key = local[start] as number;
    let end = start + 1;
    while (end < count && high[local[end] as number] === high[key] && low[local[end] as number] === low[key])
      end++;
    if (end - start > 1 && !sortRun(names, order, from + start, from + end, depth + UNITS_PER_KEY))
      return false;
    start = end;
  }
  return true;
}

/** Compares indexes by their names' code units, then by index. */
function byName(names: readonly string[]): (a: number, b: number) => number {
  return (a, b) => {
    const one = names[a] as string;
    const other = names[b] as string;
    return one < other ? -1 : one > other ? 1 : a - b;
  };
}

/** `stringOrder` by comparisons alone. */
function comparisonOrder(names: readonly string[]): Int32Array {
  return Int32Array.from(Array.from({ length: names.length }, (_, index) => index).sort(byName(names)));
}

/**
 * Code units `from` to `from + 3` of `name` as one 32-bit word, the first in the top byte, 0 past
 * the end (so a name sorts before its extensions, and a tie is left to the next key or the full
 * comparison); undefined when one does not fit a byte.
 */
function packedUnits(name: string, from: number): number | undefined {
  let word = 0;
  for (let at = from; at < from + 4; at++) {
    const code = at < name.length ? name.charCodeAt(at) : 0;
    if (code > 0xff) return undefined;
    word = (word << 8) | code;
  }
  return word;
}

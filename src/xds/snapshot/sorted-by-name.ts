import type { EncodedResource } from './types.js';

/**
 * A snapshot's resources of one type as a `ReadonlyMap` by name, backed by the array the build
 * already has, sorted by name: `get` and `has` binary-search it, iteration follows it. Building a
 * real Map of 10,000 entries per type on every reload cost more than the rest of the snapshot
 * stage; this costs nothing to build. Only for arrays sorted by strictly increasing name
 * (`isSortedByName`); the build uses a plain Map otherwise.
 */
export class SortedResourceMap implements ReadonlyMap<string, EncodedResource> {
  constructor(private readonly items: readonly EncodedResource[]) {}

  /** The resources, sorted by name: the array the map was built on, not a copy. */
  sortedList(): readonly EncodedResource[] {
    return this.items;
  }

  get size(): number {
    return this.items.length;
  }

  get(name: string): EncodedResource | undefined {
    return findSortedByName(this.items, name);
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  forEach(
    callback: (value: EncodedResource, key: string, map: ReadonlyMap<string, EncodedResource>) => void,
    thisArg?: unknown,
  ): void {
    for (const item of this.items) callback.call(thisArg, item, item.name, this);
  }

  entries(): MapIterator<[string, EncodedResource]> {
    return this.items.map((item): [string, EncodedResource] => [item.name, item])[Symbol.iterator]();
  }

  keys(): MapIterator<string> {
    return this.items.map((item) => item.name)[Symbol.iterator]();
  }

  values(): MapIterator<EncodedResource> {
    return this.items[Symbol.iterator]();
  }

  [Symbol.iterator](): MapIterator<[string, EncodedResource]> {
    return this.entries();
  }
}

/** True when every name is greater than the one before it (so `SortedResourceMap` can serve it). */
export function isSortedByName(items: readonly { readonly name: string }[]): boolean {
  for (let i = 1; i < items.length; i++) {
    if (!((items[i - 1] as { name: string }).name < (items[i] as { name: string }).name)) return false;
  }
  return true;
}

/** Lists that `isSortedImmutableList` found sorted. */
const knownSorted = new WeakSet<readonly { readonly name: string }[]>();

/**
 * `isSortedByName` for a list that is never changed once made (compile's output, whose lists are
 * immutable by contract), remembered per list: the snapshot and the consistency check both need
 * the answer for the same lists, and at 10,000 routes each walk over the names reads 10,000
 * strings scattered in memory, a cache miss each.
 */
export function isSortedImmutableList(list: readonly { readonly name: string }[]): boolean {
  if (knownSorted.has(list)) return true;
  const sorted = isSortedByName(list);
  if (sorted) knownSorted.add(list);
  return sorted;
}

/** The item named `name` in `items`, sorted by strictly increasing name (`isSortedByName`): a binary search. */
export function findSortedByName<T extends { readonly name: string }>(
  items: readonly T[],
  name: string,
): T | undefined {
  let low = 0;
  let high = items.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const item = items[middle] as T;
    if (item.name === name) return item;
    if (item.name < name) low = middle + 1;
    else high = middle - 1;
  }
  return undefined;
}

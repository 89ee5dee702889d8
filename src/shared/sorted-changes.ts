/** What left and what arrived between two lists (an item that changed under its name is both). */
export interface SortedChanges<T> {
  readonly removed: readonly T[];
  readonly added: readonly T[];
}

/**
 * The changes from `before` (sorted by name, strictly: it was an earlier `after`) to `after`, by
 * one merge walk: a run of items that are `before`'s own objects, in order (what reloads hand
 * unchanged items on as), costs no string comparison at all; items that `unchanged` accepts cost
 * a comparison or two. Undefined when `after` is not strictly sorted by
 * name, or when more than `limit` items left and arrived in all (a change that large is cheaper
 * redone in full, and stopping early spares walking the rest), so the caller redoes its work in
 * full. Used by the reload stages that keep indexes across builds and apply only what changed.
 */
export function sortedChanges<T extends { readonly name: string }>(
  before: readonly T[],
  after: readonly T[],
  unchanged: (old: T, now: T) => boolean,
  limit = Number.POSITIVE_INFINITY,
): SortedChanges<T> | undefined {
  const removed: T[] = [];
  const added: T[] = [];
  let i = 0;
  let last: string | undefined;
  // Whether the previous item of `after` was `before[i - 1]` itself: then an item that is
  // `before[i]` itself follows it in name order (`before` is sorted), and needs no comparison.
  let inRun = true;
  for (const now of after) {
    if (inRun && before[i] === now) {
      last = now.name;
      i++;
      continue;
    }
    inRun = false;
    if (last !== undefined && !(now.name > last)) return undefined;
    last = now.name;
    while (i < before.length && (before[i] as T).name < now.name) removed.push(before[i++] as T);
    const old = before[i];
    if (old !== undefined && old.name === now.name) {
      if (old !== now && !unchanged(old, now)) {
        removed.push(old);
        added.push(now);
      }
      inRun = old === now;
      i++;
    } else {
      added.push(now);
    }
    if (removed.length + added.length > limit) return undefined;
  }
  if (removed.length + added.length + (before.length - i) > limit) return undefined;
  while (i < before.length) removed.push(before[i++] as T);
  return { removed, added };
}

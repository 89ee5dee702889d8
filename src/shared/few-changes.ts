/**
 * Whether `changed` of `total` items is few enough to patch the previous state rather than build it
 * afresh: at most 64, or an eighth of the whole. Past that, deleting and adding every entry costs
 * more than a fresh build (and a reader compares everything anyway), so the build's consumers
 * (the delta's changed names, authorize's state, authenticate's route index) all draw the line here.
 */
export function fewChanges(changed: number, total: number): boolean {
  return changed <= Math.max(64, total / 8);
}

import { fullHash } from '../../shared/hash.js';
import { RESOURCE_TYPES, type ResourceType } from '../codec/type-urls.js';
import type { CompiledResource, CompiledResources, EncodeOrder } from '../compile/compile.js';
import { sameCompiledResource } from '../compile/lazy-resource.js';
import type { EncodedResource, Snapshot } from './types.js';
import { isSortedImmutableList, SortedResourceMap } from './sorted-by-name.js';
import type { SnapshotEntry } from './snapshot-entry.js';
import { dropLine, encodeFresh, type TypeEncoding } from './encode-fresh.js';

/** The previous build's compiled lists and their entries, per type: what the next build diffs against. */
let previousBuild: Partial<Record<ResourceType, TypeBuild>> = {};

/** One type of one build: the compiled list and, at the same index, each resource's entry. */
interface TypeBuild {
  readonly list: readonly CompiledResource[];
  readonly entries: readonly SnapshotEntry[];
  /** The snapshot's map of these entries; the next build reuses it when the type is unchanged. */
  readonly resources: ReadonlyMap<string, EncodedResource>;
  /** The sums of the entries' line hashes (see `addLine`), which the next build starts from. */
  readonly sumHigh: number;
  readonly sumLow: number;
}

/**
 * Encodes compiled resources into an immutable Snapshot: each resource's version is a hash of its
 * bytes, each type's version a hash over its resources' names and versions (`typeVersion`), the
 * snapshot's over the types. A resource the previous build encoded is not built or encoded again
 * (compile hands unchanged routes the same resource objects; see `sameCompiledResource`), so a
 * reload encodes only what changed; the rest are built and encoded in batches (`encodeFresh`).
 * Unchanged resources are found by walking each list beside the previous build's (both sorted by
 * name, as compile emits them) and comparing resource objects: no per-object lookup table, whose
 * 40,000 insertions were a visible share of a cold build. `options.reuse: false` (no compiled
 * object can be one the previous build saw; see CompileOptions) skips that walk. Run it before the
 * consistency check: encoding keeps the facts the check reads (see LazyResource).
 */
export function buildSnapshot(
  compiled: CompiledResources,
  options: { readonly reuse?: boolean; readonly encodeOrder?: EncodeOrder | undefined } = {},
): Snapshot {
  const reuse = options.reuse ?? true;
  const types = RESOURCE_TYPES.map((type): TypeEncoding => {
    const list = compiled[type];
    const sums = new Int32Array(2);
    const { entries, missing } = reuse
      ? reusedEntries(list, previousBuild[type], sums)
      : { entries: new Array<SnapshotEntry | undefined>(list.length), missing: list.length };
    return { type, list, entries, order: options.encodeOrder?.[type], sums, missing };
  });
  encodeFresh(types);
  const resources = {} as Record<ResourceType, ReadonlyMap<string, EncodedResource>>;
  const typeVersions = {} as Record<ResourceType, string>;
  const builds: Partial<Record<ResourceType, TypeBuild>> = {};
  for (const { type, list, entries, sums } of types) {
    // Every entry is now filled: the previous build's own object for an unchanged resource (reused
    // by identity, so under the same name; it costs no allocation here and is recognised
    // downstream by identity), a fresh one for the rest.
    const items = entries as SnapshotEntry[];
    const before = previousBuild[type];
    let same = before !== undefined && before.entries.length === list.length;
    for (let i = 0; same && i < items.length; i++) if (items[i] !== before?.entries[i]) same = false;
    // An unchanged type keeps its map object, so the ADS server skips it by identity. Each entry
    // has its resource's name, so the entries are sorted when the compiled list is.
    resources[type] =
      same && before !== undefined
        ? before.resources
        : isSortedImmutableList(list)
          ? new SortedResourceMap(items)
          : new Map(items.map((item) => [item.name, item]));
    const sumHigh = sums[0] as number;
    const sumLow = sums[1] as number;
    typeVersions[type] = typeVersion(sumHigh, sumLow, items.length);
    builds[type] = { list, entries: items, resources: resources[type], sumHigh, sumLow };
  }
  previousBuild = builds;
  const version = fullHash(RESOURCE_TYPES.map((type) => typeVersions[type]).join('.')).slice(0, 16);
  return { version, typeVersions, resources };
}

/**
 * Each resource's entry from the previous build, or undefined where it must be encoded, and how
 * many are missing: a merge walk beside `previous` (the same resource, see `sameCompiledResource`).
 * Sets `sums` to the previous build's, less every entry the walk passes over without reusing (each
 * previous entry is either reused once or dropped once), so the entries kept are not read at all.
 */
function reusedEntries(
  list: readonly CompiledResource[],
  previous: TypeBuild | undefined,
  sums: Int32Array,
): { entries: (SnapshotEntry | undefined)[]; missing: number } {
  const entries = new Array<SnapshotEntry | undefined>(list.length);
  if (previous === undefined) return { entries, missing: list.length };
  const before = previous.list;
  const kept = previous.entries;
  sums[0] = previous.sumHigh;
  sums[1] = previous.sumLow;
  let missing = 0;
  let j = 0;
  for (let i = 0; i < list.length; i++) {
    const resource = list[i] as CompiledResource;
    // The same compiled object at the walk's position: reused without comparing names.
    if (before[j] === resource) {
      entries[i] = kept[j];
      j++;
      continue;
    }
    while (j < before.length && (before[j] as CompiledResource).name < resource.name) {
      dropLine(sums, kept[j] as SnapshotEntry);
      j++;
    }
    const old = before[j];
    if (old !== undefined && sameCompiledResource(old, resource)) {
      entries[i] = kept[j];
      j++;
    } else missing++;
  }
  for (; j < before.length; j++) dropLine(sums, kept[j] as SnapshotEntry);
  return { entries, missing };
}

/**
 * A type's version: the sum (two 30-bit lanes, wrapping) of its resources' line hashes, and their
 * count. It depends only on the set of (name, version) pairs, like a hash over the sorted list
 * would, but costs two additions per resource instead of joining and hashing every line (tens of
 * milliseconds per reload at 10,000 routes). The 60 bits per line come from a 64-bit hash of the
 * bytes, so accidental collisions stay negligible; the config author, the only one who picks the inputs,
 * gains nothing from a forced one.
 */
function typeVersion(high: number, low: number, count: number): string {
  return `${high.toString(16).padStart(8, '0')}${low.toString(16).padStart(8, '0')}-${count}`;
}

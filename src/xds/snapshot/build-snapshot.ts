import { fullHash } from '../../shared/hash.js';
import { encodeMessageSpans, type ProtoObject } from '../codec/codec.js';
import { RESOURCE_TYPES, type ResourceType } from '../codec/type-urls.js';
import type { CompiledResource, CompiledResources, EncodeOrder } from '../compile/compile.js';
import { isLazy, messageOf, noteMessage, sameCompiledResource } from '../compile/lazy-resource.js';
import type { EncodedResource, Snapshot } from './types.js';
import { isSortedImmutableList, SortedResourceMap } from './sorted-by-name.js';
import { ShapeKeeper } from './shape-keeper.js';
import { HALF_MASK, snapshotEntry, type SnapshotEntry } from './snapshot-entry.js';

/** The previous build's compiled lists and their entries, per type: what the next build diffs against. */
let previousBuild: Partial<Record<ResourceType, TypeBuild>> = {};

/** One type of one build: the compiled list and, at the same index, each resource's entry. */
interface TypeBuild {
  readonly list: readonly CompiledResource[];
  readonly entries: readonly SnapshotEntry[];
  /** The snapshot's map of these entries; the next build reuses it when the type is unchanged. */
  readonly resources: ReadonlyMap<string, EncodedResource>;
  /** The sums of the entries' line hashes (see `lineSums`), which the next build starts from. */
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
  const resources = {} as Record<ResourceType, ReadonlyMap<string, EncodedResource>>;
  const typeVersions = {} as Record<ResourceType, string>;
  const builds: Partial<Record<ResourceType, TypeBuild>> = {};
  for (const type of RESOURCE_TYPES) {
    const list = compiled[type];
    const entries = reuse ? reusedEntries(list, previousBuild[type]) : freshEntries(list.length);
    encodeFresh(type, list, entries, options.encodeOrder?.[type]);
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
    typeVersions[type] = typeVersion(lineSums[0] as number, lineSums[1] as number, items.length);
    builds[type] = {
      list,
      entries: items,
      resources: resources[type],
      sumHigh: lineSums[0] as number,
      sumLow: lineSums[1] as number,
    };
  }
  previousBuild = builds;
  const version = fullHash(RESOURCE_TYPES.map((type) => typeVersions[type]).join('.')).slice(0, 16);
  return { version, typeVersions, resources };
}

/**
 * The running sums (high, low) of the line hashes of the type being built (see `typeVersion`): a
 * cold build adds each entry as it is made, while it is at hand (a separate pass in name order
 * would read every entry again, at 10,000 routes in no particular memory order); a reusing build
 * starts from the previous build's sums and takes out only the entries it drops, so a reload that
 * changed one route reads a few entries, not 40,000.
 */
const lineSums = new Int32Array(2);

/** Adds an entry's line hash to `lineSums`. */
function addLine(entry: SnapshotEntry): void {
  lineSums[0] = ((lineSums[0] as number) + entry.high) & HALF_MASK;
  lineSums[1] = ((lineSums[1] as number) + entry.low) & HALF_MASK;
}

/** Takes an entry's line hash out of `lineSums` (the lanes wrap, so this undoes `addLine`). */
function dropLine(entry: SnapshotEntry): void {
  lineSums[0] = ((lineSums[0] as number) - entry.high) & HALF_MASK;
  lineSums[1] = ((lineSums[1] as number) - entry.low) & HALF_MASK;
}

/** No entry yet for any of `count` resources, and line sums from zero: a build that reuses nothing. */
function freshEntries(count: number): (SnapshotEntry | undefined)[] {
  lineSums.fill(0);
  return new Array<SnapshotEntry | undefined>(count);
}

/** How many fresh messages are built and encoded at a time (see `encodeFresh`). */
const ENCODE_BATCH = 256;

/** Per type, the sample of encoded messages that keeps their shapes alive (see ShapeKeeper). */
const shapeKeepers = new Map<ResourceType, ShapeKeeper>();

/** How many messages each type's ShapeKeeper holds. */
const SHAPES_KEPT_PER_TYPE = 64;

/**
 * Fills each missing entry of `entries` by building the resource's message and encoding it, a
 * batch at a time (`encodeMessageSpans`): the batch's messages are dropped as soon as they are
 * encoded, so a cold build never holds every message of a type at once (they would survive, and
 * be copied by, each young-generation collection the build runs). The first lazily built message
 * of each batch is kept a while longer, to keep its shape (see ShapeKeeper). A lazy resource also keeps the
 * facts the consistency check reads from the message it was just built into.
 */
function encodeFresh(
  type: ResourceType,
  list: readonly CompiledResource[],
  entries: (SnapshotEntry | undefined)[],
  order: Int32Array | undefined,
): void {
  const ordered = order !== undefined && order.length === list.length;
  const indexes: number[] = [];
  const messages: ProtoObject[] = [];
  let keptFromBatch = false;
  let keeper = shapeKeepers.get(type);
  if (keeper === undefined) {
    keeper = new ShapeKeeper(SHAPES_KEPT_PER_TYPE);
    shapeKeepers.set(type, keeper);
  }
  const flush = (): void => {
    const { blocks, blockOf, starts, ends } = encodeMessageSpans(type, messages);
    for (let at = 0; at < indexes.length; at++) {
      const index = indexes[at] as number;
      const entry = snapshotEntry(
        (list[index] as CompiledResource).name,
        blocks[blockOf[at] as number] as Uint8Array,
        starts[at] as number,
        ends[at] as number,
      );
      entries[index] = entry;
      addLine(entry);
    }
    indexes.length = 0;
    messages.length = 0;
    keptFromBatch = false;
  };
  for (let k = 0; k < list.length; k++) {
    const i = ordered ? ((order as Int32Array)[k] as number) : k;
    if (entries[i] !== undefined) continue;
    const resource = list[i] as CompiledResource;
    const message = messageOf(type, resource);
    if (isLazy(resource)) {
      noteMessage(type, resource, message);
      // Only lazily built messages: one held by its resource keeps its shape already, and may be
      // large (the single RouteConfiguration holds every host).
      if (!keptFromBatch) keeper.keep(message);
      keptFromBatch = true;
    }
    indexes.push(i);
    messages.push(message);
    if (messages.length === ENCODE_BATCH) flush();
  }
  if (messages.length > 0) flush();
}

/**
 * Each resource's entry from the previous build, or undefined where it must be encoded: a merge
 * walk beside `previous` (the same resource, see `sameCompiledResource`). Sets `lineSums` to the
 * previous build's, less every entry the walk passes over without reusing (each previous entry is
 * either reused once or dropped once), so the entries kept are not read at all.
 */
function reusedEntries(
  list: readonly CompiledResource[],
  previous: TypeBuild | undefined,
): (SnapshotEntry | undefined)[] {
  if (previous === undefined) return freshEntries(list.length);
  const entries = new Array<SnapshotEntry | undefined>(list.length);
  const before = previous.list;
  const kept = previous.entries;
  lineSums[0] = previous.sumHigh;
  lineSums[1] = previous.sumLow;
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
      dropLine(kept[j] as SnapshotEntry);
      j++;
    }
    const old = before[j];
    if (old !== undefined && sameCompiledResource(old, resource)) {
      entries[i] = kept[j];
      j++;
    }
  }
  for (; j < before.length; j++) dropLine(kept[j] as SnapshotEntry);
  return entries;
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

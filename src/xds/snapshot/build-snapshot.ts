import { hash } from 'node:crypto';
import { shortHash } from '../../shared/hash.js';
import { encodeMessage } from '../../proto/codec.js';
import type { CompiledResource, CompiledResources } from '../../proto/compiled.js';
import { RESOURCE_TYPES, type ResourceType } from '../../proto/type-urls.js';
import type { EncodedResource, Snapshot } from './types.js';

/**
 * Encoded resources per type, by the content key of what they were encoded from (see `cacheKey`),
 * with the names and keys of the compiled lists (not the compiled messages: those are garbage once
 * encoded) and the snapshot they were built into: the reuse a reload needs, as one explicit value. `buildSnapshot` takes the previous build's and returns the next, which holds
 * exactly the resources of the snapshot it built, so it never grows past one snapshot's worth. The
 * caller (the runtime's last good build) keeps it; nothing else does.
 */
export interface EncodeCache {
  readonly resources: Readonly<Record<ResourceType, ReadonlyMap<string, EncodedResource>>>;
  /** Per type, the names and cache keys of the compiled list the snapshot was built from, in its order. */
  readonly lists: Readonly<Record<ResourceType, KeyedList>>;
  readonly snapshot: Snapshot;
  /** Per type, the `name version` lines its version hashes, in map order when that is sorted. */
  readonly lines: Readonly<Record<ResourceType, readonly string[] | undefined>>;
}

/** What `buildSnapshot` returns: the snapshot, the cache to hand the next build, and its work. */
export interface SnapshotBuild {
  readonly snapshot: Snapshot;
  readonly cache: EncodeCache;
  /** Resources encoded by this call: those whose content key the cache did not hold. */
  readonly encoded: number;
}

/** A compiled list as the cache remembers it: each resource's name and cache key, by index. */
export interface KeyedList {
  readonly names: readonly string[];
  readonly keys: readonly string[];
}

/** One type's part of a snapshot build. */
interface TypeBuild {
  readonly byName: ReadonlyMap<string, EncodedResource>;
  readonly byKey: ReadonlyMap<string, EncodedResource>;
  /** The type's version, and the lines it hashes in map order when that is sorted (see `versioned`). */
  readonly version: string;
  readonly lines: readonly string[] | undefined;
  readonly list: KeyedList;
  readonly encoded: number;
}

/**
 * Encodes compiled resources into an immutable Snapshot. Each resource is encoded with protobufjs
 * and versioned by a hash of its bytes; each type's version is a hash over its resources' names
 * and versions, the snapshot's over the type versions. A resource whose content key is in `cache`
 * (one the previous build encoded from the same content) takes that encoding as it is (the
 * identical `EncodedResource`), so a reload re-encodes only what changed (encoding is most of a
 * cold build's snapshot time). A type whose compiled list holds the same names and cache keys the
 * previous one did (compile gives back the same content keys for unchanged content) is the
 * previous snapshot's, version and all, after one key comparison per resource; one where only some
 * resources changed in place starts from the previous snapshot's maps. Same compiled resources,
 * same snapshot, with or without a cache.
 */
export function buildSnapshot(compiled: CompiledResources, cache?: EncodeCache): SnapshotBuild {
  const resources = {} as Record<ResourceType, ReadonlyMap<string, EncodedResource>>;
  const next = {} as Record<ResourceType, ReadonlyMap<string, EncodedResource>>;
  const known = {} as Record<ResourceType, string>;
  const lines = {} as Record<ResourceType, readonly string[] | undefined>;
  const lists = {} as Record<ResourceType, KeyedList>;
  let encoded = 0;
  for (const type of RESOURCE_TYPES) {
    const built =
      (cache === undefined ? undefined : fromPrevious(type, compiled[type], cache)) ??
      encodeType(type, compiled[type], cache?.resources[type]);
    resources[type] = built.byName;
    next[type] = built.byKey;
    known[type] = built.version;
    lines[type] = built.lines;
    lists[type] = built.list;
    encoded += built.encoded;
  }
  const snapshot = snapshotOf(resources, known);
  return { snapshot, cache: { resources: next, lists, snapshot, lines }, encoded };
}

/** Every resource of one type looked up (or encoded) by its content key, into new maps. */
function encodeType(
  type: ResourceType,
  list: readonly CompiledResource[],
  cached: ReadonlyMap<string, EncodedResource> | undefined,
): TypeBuild {
  const byName = new Map<string, EncodedResource>();
  const byKey = new Map<string, EncodedResource>();
  const names: string[] = [];
  const keys: string[] = [];
  let encoded = 0;
  for (const resource of list) {
    const key = cacheKey(resource);
    names.push(resource.name);
    keys.push(key);
    let entry = cached?.get(key);
    if (entry === undefined) {
      entry = encodeResource(type, resource);
      encoded += 1;
    }
    byKey.set(key, entry);
    byName.set(entry.name, entry);
  }
  return { byName, byKey, ...versioned(byName), list: { names, keys }, encoded };
}

/**
 * One type from the previous build when its list is the previous list (the same names and cache
 * keys in the same places) with at most a quarter of its resources replaced by others of the same
 * name at the same place: the previous snapshot's
 * maps as they are (nothing replaced: the type version too), or copies with the replaced entries
 * swapped (names keep their places, so the maps keep name order). Undefined otherwise: the caller
 * encodes the type in full.
 */
function fromPrevious(
  type: ResourceType,
  list: readonly CompiledResource[],
  cache: EncodeCache,
): TypeBuild | undefined {
  const before = cache.lists[type];
  const cached = cache.resources[type];
  const byName = cache.snapshot.resources[type];
  // One entry per resource (no two shared a key or a name), so the maps can be edited entry by entry.
  if (before.keys.length !== list.length || cached.size !== list.length || byName.size !== list.length)
    return undefined;
  const replaced: number[] = [];
  const keys: string[] = [];
  for (let index = 0; index < list.length; index += 1) {
    const now = list[index] as CompiledResource;
    const key = cacheKey(now);
    keys.push(key);
    if (now.name !== before.names[index]) return undefined;
    if (key === before.keys[index]) continue;
    if (replaced.length >= list.length / 4) return undefined;
    replaced.push(index);
  }
  const lines = cache.lines[type];
  if (replaced.length === 0) {
    const version = cache.snapshot.typeVersions[type];
    return { byName, byKey: cached, version, lines, list: before, encoded: 0 };
  }
  const nextByName = new Map(byName);
  const nextByKey = new Map(cached);
  let encoded = 0;
  // Names keep their places, so the lines stay in sorted order with new versions in them.
  const nextLines = lines?.slice();
  for (const index of replaced) {
    const resource = list[index] as CompiledResource;
    const key = keys[index] as string;
    let entry = cached.get(key);
    if (entry === undefined) {
      entry = encodeResource(type, resource);
      encoded += 1;
    }
    nextByKey.delete(before.keys[index] as string);
    nextByKey.set(key, entry);
    nextByName.set(resource.name, entry);
    if (nextLines !== undefined) nextLines[index] = `${entry.name} ${entry.version}`;
  }
  // A key given to two resources would leave fewer entries than resources: encode in full instead.
  if (nextByKey.size !== list.length) return undefined;
  const nextList = { names: before.names, keys };
  return {
    byName: nextByName,
    byKey: nextByKey,
    ...versioned(nextByName, nextLines),
    list: nextList,
    encoded,
  };
}

/**
 * The snapshot of encoded `resources` (each type's map as given): each type's version a hash of
 * its resources' names and versions, the snapshot's a hash of the type versions. So two snapshots
 * with the same resources have the same versions, however they were put together. `known` holds
 * type versions already computed for maps passed through unchanged (from the snapshot they came
 * from), so a snapshot assembled from others hashes only the types it changed.
 */
export function snapshotOf(
  resources: Readonly<Record<ResourceType, ReadonlyMap<string, EncodedResource>>>,
  known: Partial<Readonly<Record<ResourceType, string>>> = {},
): Snapshot {
  const typeVersions = {} as Record<ResourceType, string>;
  for (const type of RESOURCE_TYPES) typeVersions[type] = known[type] ?? typeVersion(resources[type]);
  const version = shortHash(RESOURCE_TYPES.map((type) => typeVersions[type]).join('\n'));
  return { version, typeVersions, resources };
}

/** Encodes one resource; its version is the content hash of its bytes. */
function encodeResource(type: ResourceType, { name, message }: CompiledResource): EncodedResource {
  const bytes = encodeMessage(type, message);
  return { name, version: shortHash(bytes), bytes };
}

/**
 * The cache key of a compiled resource: the content key compile gave it (a hash of what its name
 * and message were made from), or else a SHA-256 of its name and message as JSON text. Equal text
 * means an equal message, hence equal bytes; two messages that differ only in key order get
 * different keys: a cache miss, never a wrong hit.
 */
function cacheKey(resource: CompiledResource): string {
  // The message only when there is no key: a kept resource makes its message again on each read.
  return (
    resource.contentKey ?? hash('sha256', `${resource.name}\n${JSON.stringify(resource.message)}`, 'base64')
  );
}

/**
 * A type's version (as `typeVersion` computes it) and its lines in map order when that order is
 * already sorted (compile's lists are in name order), so the next build can replace a few lines
 * instead of writing and sorting them all. `lines`, when given, are the map's in sorted order.
 */
function versioned(
  resources: ReadonlyMap<string, EncodedResource>,
  lines?: readonly string[],
): { readonly version: string; readonly lines: readonly string[] | undefined } {
  if (lines !== undefined) return { version: shortHash(lines.join('\n')), lines };
  const own: string[] = [];
  let sorted = true;
  for (const { name, version } of resources.values()) {
    const line = `${name} ${version}`;
    if (sorted && own.length > 0 && !((own[own.length - 1] as string) < line)) sorted = false;
    own.push(line);
  }
  if (sorted) return { version: shortHash(own.join('\n')), lines: own };
  return { version: shortHash(own.sort().join('\n')), lines: undefined };
}

/** A type's version: the hash of its resources' `name version` lines, in name order. */
function typeVersion(resources: ReadonlyMap<string, EncodedResource>): string {
  const lines: string[] = [];
  for (const { name, version } of resources.values()) lines.push(`${name} ${version}`);
  return shortHash(lines.sort().join('\n'));
}

import { hash } from 'node:crypto';
import { shortHash } from '../../shared/hash.js';
import { encodeMessage } from '../../proto/codec.js';
import type { CompiledResource, CompiledResources } from '../../proto/compiled.js';
import { RESOURCE_TYPES, type ResourceType } from '../../proto/type-urls.js';
import type { EncodedResource, Snapshot } from './types.js';

/**
 * Encoded resources per type, by the content key of what they were encoded from (see `cacheKey`),
 * and the type versions of the snapshot they make up: the reuse a reload needs, as one explicit
 * value. `buildSnapshot` takes the previous build's and returns the next, which holds exactly the
 * resources of the snapshot it built, so it never grows past one snapshot's worth. The caller (the
 * runtime's last good build) keeps it; nothing else does.
 */
export interface EncodeCache {
  readonly resources: Readonly<Record<ResourceType, ReadonlyMap<string, EncodedResource>>>;
  readonly typeVersions: Readonly<Record<ResourceType, string>>;
}

/** What `buildSnapshot` returns: the snapshot, the cache to hand the next build, and its work. */
export interface SnapshotBuild {
  readonly snapshot: Snapshot;
  readonly cache: EncodeCache;
  /** Resources encoded by this call: those whose content key the cache did not hold. */
  readonly encoded: number;
}

/**
 * Encodes compiled resources into an immutable Snapshot. Each resource is encoded with protobufjs
 * and versioned by a hash of its bytes; each type's version is a hash over its resources' names
 * and versions, the snapshot's over the type versions. A resource whose content key is in `cache`
 * (one the previous build encoded from the same content) takes that encoding as it is (the
 * identical `EncodedResource`), so a reload re-encodes only what changed (encoding is most of a
 * cold build's snapshot time); a type all of whose resources were taken so keeps its version
 * without hashing its resources again. Same compiled resources, same snapshot, with or without a
 * cache.
 */
export function buildSnapshot(compiled: CompiledResources, cache?: EncodeCache): SnapshotBuild {
  const resources = {} as Record<ResourceType, ReadonlyMap<string, EncodedResource>>;
  const next = {} as Record<ResourceType, ReadonlyMap<string, EncodedResource>>;
  const known: Partial<Record<ResourceType, string>> = {};
  let encodedCount = 0;
  for (const type of RESOURCE_TYPES) {
    const cached = cache?.resources[type];
    const encoded = new Map<string, EncodedResource>();
    const keep = new Map<string, EncodedResource>();
    let taken = 0;
    for (const resource of compiled[type]) {
      const key = cacheKey(resource);
      let entry = cached?.get(key);
      if (entry === undefined) {
        entry = encodeResource(type, resource);
        encodedCount += 1;
      } else taken += 1;
      keep.set(key, entry);
      encoded.set(entry.name, entry);
    }
    resources[type] = encoded;
    next[type] = keep;
    // Every earlier entry taken once, and nothing else: the very resources of the earlier type.
    const same = cache !== undefined && taken === compiled[type].length && keep.size === cached?.size;
    if (same && encoded.size === keep.size) known[type] = cache.typeVersions[type];
  }
  const snapshot = snapshotOf(resources, known);
  return { snapshot, cache: { resources: next, typeVersions: snapshot.typeVersions }, encoded: encodedCount };
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
function cacheKey({ name, message, contentKey }: CompiledResource): string {
  return contentKey ?? hash('sha256', `${name}\n${JSON.stringify(message)}`, 'base64');
}

/** A type's version: the hash of its resources' `name version` lines, in name order. */
function typeVersion(resources: ReadonlyMap<string, EncodedResource>): string {
  const lines: string[] = [];
  for (const { name, version } of resources.values()) lines.push(`${name} ${version}`);
  return shortHash(lines.sort().join('\n'));
}

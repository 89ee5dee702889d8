import { contentHash64 } from '../../shared/fast-hash.js';
import { fullHash } from '../../shared/hash.js';
import { encodeMessages } from '../codec/codec.js';
import { RESOURCE_TYPES, type ResourceType } from '../codec/type-urls.js';
import type { CompiledResource, CompiledResources } from '../compile/compile.js';
import type { EncodedResource, Snapshot } from './types.js';
import { isSortedByName, SortedResourceMap } from './sorted-by-name.js';

/** The snapshot entry made from a compiled message, by the message object. */
const encodedMessages = new WeakMap<object, EncodedEntry>();

/**
 * A resource as snapshots hold it, plus the two 30-bit halves it adds to its type's version
 * (`lineHash`): one object per resource, reused by every build while the message is unchanged.
 * The halves stay below 2^30 so V8 keeps them as small integers, not boxed numbers.
 */
interface EncodedEntry extends EncodedResource {
  readonly high: number;
  readonly low: number;
}

/** The entry for `bytes` under `name`. */
function entryFor(name: string, bytes: Uint8Array, version = resourceVersion(bytes)): EncodedEntry {
  const [high, low] = lineHash(name, version);
  return { name, version, bytes, high, low };
}

/** The previous build's compiled lists and their entries, per type: what the next build diffs against. */
let previousBuild: Partial<Record<ResourceType, TypeBuild>> = {};

/** One type of one build: the compiled list and, at the same index, each resource's entry. */
interface TypeBuild {
  readonly list: readonly CompiledResource[];
  readonly entries: readonly EncodedEntry[];
  /** The snapshot's map of these entries; the next build reuses it when the type is unchanged. */
  readonly resources: ReadonlyMap<string, EncodedResource>;
}

/**
 * Encodes compiled resources into an immutable Snapshot: each resource's version is a hash of its
 * bytes, each type's version a hash over its resources' names and versions (`typeVersion`), the
 * snapshot's over the types. A message object encoded by an earlier build is not encoded again (compile hands
 * unchanged routes the same message objects), so a reload encodes only what changed; the rest are
 * batch-encoded per type (`encodeMessages`). Unchanged resources are found by walking each list
 * beside the previous build's (both sorted by name, as compile emits them) and comparing message
 * objects, which at 40,000 resources is several times cheaper than looking each one up by object.
 */
export function buildSnapshot(compiled: CompiledResources): Snapshot {
  const resources = {} as Record<ResourceType, ReadonlyMap<string, EncodedResource>>;
  const typeVersions = {} as Record<ResourceType, string>;
  const builds: Partial<Record<ResourceType, TypeBuild>> = {};
  for (const type of RESOURCE_TYPES) {
    const list = compiled[type];
    const entries = reusedEntries(list, previousBuild[type]);
    const fresh: number[] = [];
    for (let i = 0; i < list.length; i++) if (entries[i] === undefined) fresh.push(i);
    if (fresh.length > 0) {
      const encoded = encodeMessages(
        type,
        fresh.map((index) => (list[index] as CompiledResource).message),
      );
      for (let at = 0; at < fresh.length; at++) {
        const index = fresh[at] as number;
        const resource = list[index] as CompiledResource;
        const entry = entryFor(resource.name, encoded[at] as Uint8Array);
        encodedMessages.set(resource.message, entry);
        entries[index] = entry;
      }
    }
    const items: EncodedEntry[] = new Array<EncodedEntry>(list.length);
    const before = previousBuild[type];
    let same = before !== undefined && before.entries.length === list.length;
    let high = 0;
    let low = 0;
    for (let i = 0; i < list.length; i++) {
      const { name, message } = list[i] as CompiledResource;
      let entry = entries[i] as EncodedEntry;
      // The same entry object as the last build's, so an unchanged resource costs no allocation
      // here and is recognised downstream by identity. (A message object reused under another
      // name gets an entry of its own.)
      if (entry.name !== name) {
        entry = entryFor(name, entry.bytes, entry.version);
        encodedMessages.set(message, entry);
        entries[i] = entry;
      }
      items[i] = entry;
      if (same && entry !== before?.entries[i]) same = false;
      high = (high + entry.high) & HALF_MASK;
      low = (low + entry.low) & HALF_MASK;
    }
    // An unchanged type keeps its map object, so the ADS server skips it by identity.
    resources[type] =
      same && before !== undefined
        ? before.resources
        : isSortedByName(items)
          ? new SortedResourceMap(items)
          : new Map(items.map((item) => [item.name, item]));
    typeVersions[type] = typeVersion(high, low, items.length);
    builds[type] = { list, entries: entries as EncodedEntry[], resources: resources[type] };
  }
  previousBuild = builds;
  const version = fullHash(RESOURCE_TYPES.map((type) => typeVersions[type]).join('.')).slice(0, 16);
  return { version, typeVersions, resources };
}

/**
 * Each resource's entry from an earlier build, or undefined where it must be encoded: first by a
 * merge walk beside `previous` (same name, same message object), then by the message object.
 */
function reusedEntries(
  list: readonly CompiledResource[],
  previous: TypeBuild | undefined,
): (EncodedEntry | undefined)[] {
  const entries = new Array<EncodedEntry | undefined>(list.length);
  const before = previous?.list ?? [];
  let j = 0;
  for (let i = 0; i < list.length; i++) {
    const resource = list[i] as CompiledResource;
    while (j < before.length && (before[j] as CompiledResource).name < resource.name) j++;
    const old = before[j];
    if (old !== undefined && old.message === resource.message && old.name === resource.name) {
      entries[i] = previous?.entries[j];
      j++;
    } else {
      entries[i] = encodedMessages.get(resource.message);
    }
  }
  return entries;
}

/** Keeps a 30-bit half (line hashes and their sums). */
const HALF_MASK = 0x3fffffff;

/**
 * The 60 bits one resource adds to its type's version, as two 30-bit halves: its version (a 64-bit
 * hash of its bytes) mixed with two FNV-style hashes of its name, so the same bytes under
 * another name count differently. Computed once per new encoding; no hash object per resource
 * (a SHA-256 per name cost tens of milliseconds on a cold 40,000-resource build).
 */
function lineHash(name: string, version: string): readonly [number, number] {
  // 30 bits of each 32-bit half: small integers (see EncodedEntry).
  let first = 0x811c9dc5;
  let second = 0x9747b28c;
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i);
    first = Math.imul(first ^ code, 0x01000193);
    second = Math.imul(second ^ code, 0x5bd1e995);
  }
  return [
    (Number.parseInt(version.slice(0, 8), 16) ^ first) & HALF_MASK,
    (Number.parseInt(version.slice(8, 16), 16) ^ second) & HALF_MASK,
  ];
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

/** A resource's version: a 64-bit hash of its bytes (`contentHash64`, see there why not SHA-256). */
function resourceVersion(bytes: Uint8Array): string {
  return contentHash64(bytes);
}

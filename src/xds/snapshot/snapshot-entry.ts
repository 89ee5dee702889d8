import { hashLanes, hex64, lastLanes } from '../../shared/fast-hash.js';
import type { EncodedResource, HeldResource } from './types.js';

/** Keeps a 30-bit half (line hashes and their sums). */
export const HALF_MASK = 0x3fffffff;

/** The two name hashes of the last `nameHashes` call. */
const nameLanes = new Int32Array(2);

/**
 * A resource as a snapshot holds it: its name, where its bytes are in a block shared with the other
 * resources encoded beside it, the 64-bit hash of those bytes (`hashHigh`, `hashLow`), and the two
 * 30-bit halves it adds to its type's version (`high`, `low`; see `typeVersion`). One record per
 * resource, reused by every build while the resource is unchanged (so downstream, the same entry
 * means the same resource). Read it through `resourceBytes` and `resourceVersion`: its bytes are a
 * view made on each read (the ADS server reads them once per push) and its version is spelled
 * out on first read (delta xDS reads it; state-of-the-world never does), so 40,000 entries at
 * 10,000 routes are not 120,000 objects. It is a plain record made by an object literal
 * (`snapshotEntry`), not a class instance, so V8 can pretenure it: entries live as long as their
 * snapshot, and a class instance would be born young and copied by the collections of a cold build.
 * Every field is a small integer, a reference or undefined, so V8 stores them inline.
 */
export interface SnapshotEntry {
  readonly name: string;
  readonly block: Uint8Array;
  readonly start: number;
  readonly end: number;
  readonly high: number;
  readonly low: number;
  readonly hashHigh: number;
  readonly hashLow: number;
  /** The version, once spelled out (see `resourceVersion`). */
  versionText: string | undefined;
}

/** Hashes bytes `start` to `end` of `block` (see `hashLanes`) and mixes in `name` (see `nameHashes`). */
export function snapshotEntry(name: string, block: Uint8Array, start: number, end: number): SnapshotEntry {
  hashLanes(block, start, end);
  nameHashes(name);
  const hashHigh = lastLanes[0] as number;
  const hashLow = lastLanes[1] as number;
  return {
    name,
    block,
    start,
    end,
    high: (hashHigh ^ (nameLanes[0] as number)) & HALF_MASK,
    low: (hashLow ^ (nameLanes[1] as number)) & HALF_MASK,
    hashHigh: hashHigh | 0,
    hashLow: hashLow | 0,
    versionText: undefined,
  };
}

function isSnapshotEntry(resource: EncodedResource): resource is SnapshotEntry {
  return (resource as Partial<SnapshotEntry>).block !== undefined;
}

/** The encoded bytes of a resource: for a snapshot entry, a new view of its shared block on each read. */
export function resourceBytes(resource: EncodedResource): Uint8Array {
  return isSnapshotEntry(resource)
    ? resource.block.subarray(resource.start, resource.end)
    : (resource as HeldResource).bytes;
}

/**
 * A resource's version: for a snapshot entry, its content hash as 16 hex digits (the same bytes
 * give the same version, across restarts too), spelled out once.
 */
export function resourceVersion(resource: EncodedResource): string {
  if (!isSnapshotEntry(resource)) return (resource as HeldResource).version;
  resource.versionText ??= hex64(resource.hashHigh, resource.hashLow);
  return resource.versionText;
}

/**
 * What a resource's name adds to its line hash: two FNV-style hashes of the name, in one pass, that
 * the entry mixes with the two 32-bit lanes of its content hash, so the same bytes under another
 * name count differently. Computed once per new encoding; no hash object per resource (a SHA-256
 * per name cost tens of milliseconds on a cold 40,000-resource build).
 */
function nameHashes(name: string): void {
  let first = 0x811c9dc5;
  let second = 0x9747b28c;
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i);
    first = Math.imul(first ^ code, 0x01000193);
    second = Math.imul(second ^ code, 0x5bd1e995);
  }
  nameLanes[0] = first;
  nameLanes[1] = second;
}

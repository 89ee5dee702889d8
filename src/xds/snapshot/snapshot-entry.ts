import { hashLanes, hex64, lastLanes } from '../../shared/fast-hash.js';
import type { EncodedResource } from './types.js';

/** Keeps a 30-bit half (line hashes and their sums). */
export const HALF_MASK = 0x3fffffff;

/** The two name hashes of the last `nameHashes` call. */
const nameLanes = new Int32Array(2);

/**
 * A resource as a snapshot holds it: its name, where its bytes are in a block shared with the other
 * resources encoded beside it, the 64-bit hash of those bytes, and the two 30-bit halves it adds to
 * its type's version (`high`, `low`; see `typeVersion`). One object per resource, reused by every
 * build while the resource is unchanged (so downstream, the same entry object means the same
 * resource). It used to hold a Buffer view and a version string as well: three objects per resource,
 * 40,000 of each at 10,000 routes, all copied by each young-generation collection during the build
 * and kept for the snapshot's life. Now `bytes` is a view made on each read (the ADS server reads it
 * once per push) and `version` is spelled out on first read (delta xDS reads it; state-of-the-world
 * never does). Every field is a small integer or a reference, so V8 stores them inline.
 */
export class SnapshotEntry implements EncodedResource {
  readonly high: number;
  readonly low: number;
  /** The 64-bit content hash of the bytes, as two signed 32-bit halves (see `version`). */
  private readonly hashHigh: number;
  private readonly hashLow: number;
  private versionText: string | undefined = undefined;

  /** Hashes bytes `start` to `end` of `block` (see `hashLanes`) and mixes in `name` (see `nameHashes`). */
  constructor(
    readonly name: string,
    private readonly block: Uint8Array,
    private readonly start: number,
    private readonly end: number,
  ) {
    hashLanes(block, start, end);
    nameHashes(name);
    const hashHigh = lastLanes[0] as number;
    const hashLow = lastLanes[1] as number;
    this.hashHigh = hashHigh | 0;
    this.hashLow = hashLow | 0;
    this.high = (hashHigh ^ (nameLanes[0] as number)) & HALF_MASK;
    this.low = (hashLow ^ (nameLanes[1] as number)) & HALF_MASK;
  }

  /** The encoded resource: a new view of the shared block on each read. */
  get bytes(): Uint8Array {
    return this.block.subarray(this.start, this.end);
  }

  /** The content hash as 16 hex digits: the same bytes give the same version, across restarts too. */
  get version(): string {
    this.versionText ??= hex64(this.hashHigh, this.hashLow);
    return this.versionText;
  }
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

/**
 * A 64-bit content hash of `bytes` as 16 hex characters: two MurmurHash3 (x86, 32-bit) lanes with
 * different seeds, computed in one pass. It names xDS resource versions, where what matters is
 * that different content gives a different version (accidental collisions among 10^5 resources
 * are about 10^-9) and that it is cheap: one SHA-256 call per resource was a visible share of a
 * cold 40,000-resource build, mostly per-call overhead. Not for anything an attacker could aim at;
 * only the config author chooses these inputs.
 */
export function contentHash64(bytes: Uint8Array): string {
  hashLanes(bytes);
  return lanesHex();
}

/**
 * The two 32-bit lanes of the last `hashLanes` call (unsigned): `contentHash64` is their hex. Read
 * them right after the call; kept here, rather than returned as a pair, so hashing 40,000
 * resources allocates nothing but the version strings.
 */
export const lastLanes = new Uint32Array(2);

/**
 * Hashes `bytes` (or its bytes `start` to `end`, exactly as that subarray would hash) into
 * `lastLanes` (see `contentHash64`).
 */
export function hashLanes(bytes: Uint8Array, start = 0, end = bytes.length): void {
  let first = 0x9747b28c;
  let second = 0x5bd1e995;
  const length = end - start;
  const blocks = start + (length & ~3);
  let i = start;
  for (; i < blocks; i += 4) {
    const block =
      (bytes[i] as number) |
      ((bytes[i + 1] as number) << 8) |
      ((bytes[i + 2] as number) << 16) |
      ((bytes[i + 3] as number) << 24);
    first = mixLane(first, block);
    second = mixLane(second, block);
  }
  const rest = length & 3;
  if (rest > 0) {
    let tail = bytes[i] as number;
    if (rest > 1) tail ^= (bytes[i + 1] as number) << 8;
    if (rest > 2) tail ^= (bytes[i + 2] as number) << 16;
    first ^= scramble(tail);
    second ^= scramble(tail);
  }
  lastLanes[0] = finish(first, length);
  lastLanes[1] = finish(second, length);
}

/** `lastLanes` as 16 lowercase hex digits, in one string allocation. */
export function lanesHex(): string {
  return hex64(lastLanes[0] as number, lastLanes[1] as number);
}

/**
 * Two 32-bit words as 16 lower-case hex digits, `high` first, in one flat string (no slices or
 * concatenations that V8 would keep as cons strings).
 */
export function hex64(high: number, low: number): string {
  const a = high >>> 0;
  const b = low >>> 0;
  return String.fromCharCode(
    hexDigit(a >>> 28),
    hexDigit((a >>> 24) & 15),
    hexDigit((a >>> 20) & 15),
    hexDigit((a >>> 16) & 15),
    hexDigit((a >>> 12) & 15),
    hexDigit((a >>> 8) & 15),
    hexDigit((a >>> 4) & 15),
    hexDigit(a & 15),
    hexDigit(b >>> 28),
    hexDigit((b >>> 24) & 15),
    hexDigit((b >>> 20) & 15),
    hexDigit((b >>> 16) & 15),
    hexDigit((b >>> 12) & 15),
    hexDigit((b >>> 8) & 15),
    hexDigit((b >>> 4) & 15),
    hexDigit(b & 15),
  );
}

/** The char code of hex digit `nibble` (0-15): '0'-'9', then 'a'-'f'. */
function hexDigit(nibble: number): number {
  return nibble < 10 ? 48 + nibble : 87 + nibble;
}

function scramble(block: number): number {
  let k = Math.imul(block, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  return Math.imul(k, 0x1b873593);
}

function mixLane(hash: number, block: number): number {
  let h = hash ^ scramble(block);
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

function finish(hash: number, length: number): number {
  let h = hash ^ length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

import { hash } from 'node:crypto';

/**
 * Short, stable content hash used for resource names and xDS versions. Names must be derived from
 * content, never from counters, so that a restarted control plane produces the same names and
 * versions for the same config (see security-threats.md 2.1: renamed snapshots cause outages).
 * 16 hex characters (64 bits) keeps names short while making collisions negligible at 10^5 routes.
 */
export function shortHash(input: string | Uint8Array): string {
  // Node's one-shot `hash` (no Hash object per call: 10,000 route ids per cold build). Hex of the
  // first 8 bytes, not a slice of the full hex digest: a slice would keep the 64-char digest alive
  // behind every id (megabytes at 10,000 routes).
  return (hash('sha256', input, 'buffer') as Buffer).toString('hex', 0, 8);
}

/** Full SHA-256 hex digest, for versions of whole snapshots. */
export function fullHash(input: string | Uint8Array): string {
  return hash('sha256', input, 'hex');
}

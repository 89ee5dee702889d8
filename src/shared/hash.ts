import { hash } from 'node:crypto';

/**
 * Short, stable content hash used for resource names and xDS versions: the first 16 hex digits
 * (64 bits) of SHA-256. Names must be derived from content, never from counters, so that a
 * restarted control plane produces the same names and versions for the same config (see
 * security-threats.md 2.1: renamed snapshots cause outages). 64 bits keep names short while
 * making collisions negligible at 10^5 routes.
 */
export function shortHash(input: string | Uint8Array): string {
  return hash('sha256', input, 'buffer').toString('hex', 0, 8);
}

/** Full SHA-256 hex digest, for versions of whole snapshots. */
export function fullHash(input: string | Uint8Array): string {
  return hash('sha256', input, 'hex');
}

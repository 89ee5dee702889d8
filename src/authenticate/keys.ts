import { hkdfSync } from 'node:crypto';

/**
 * What each derived key is for. One HKDF input secret never keys two purposes, so a value sealed
 * for one use (a sign-in state) can never be opened as another (a handoff).
 */
export type KeyPurpose =
  | 'sign-in-state'
  | 'flow-cookie'
  | 'handoff'
  | 'programmatic-request'
  | 'session-tokens'
  | 'sign-out-csrf';

/**
 * A 32-byte key for `purpose` derived from `secret` (`cookie_secret` or `shared_secret`) with
 * HKDF-SHA256, so every replica with the same secret derives the same keys and no key is stored.
 */
export function deriveKey(secret: Uint8Array, purpose: KeyPurpose): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', secret, 'portcullis/authenticate', `portcullis/${purpose}`, 32));
}

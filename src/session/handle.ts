import { createHmac, timingSafeEqual } from 'node:crypto';
import { deriveKey } from '../shared/key-schedule.js';

/** Bound on remembered verified handles (about 200 bytes each). */
const MAX_VERIFIED = 100_000;

/**
 * Session handles: what the `_portcullis` cookie and `Authorization: Portcullis <token>` carry.
 * A handle names a server-side session and is MACed so it cannot be forged or guessed into:
 * `base64url(session id) "." base64url(HMAC-SHA256(key, id))`. The key is derived from the shared
 * secret, so every replica accepts every other's handles. Nothing about the user is in the handle.
 */
export class SessionHandles {
  private readonly key: Buffer;
  /**
   * Handles already verified, to their session id. A handle is a pure function of the key and the
   * id, so a hit is exactly what verifying again would return; it saves the HMAC (the largest part
   * of a cached-assertion decision). Bounded; starts over when full.
   */
  private readonly verified = new Map<string, string>();

  constructor(sharedSecret: Uint8Array) {
    this.key = Buffer.from(deriveKey(sharedSecret, 'session-handle'));
  }

  /** The handle for `sessionId`. */
  issue(sessionId: string): string {
    return `${Buffer.from(sessionId).toString('base64url')}.${this.mac(sessionId).toString('base64url')}`;
  }

  /** The session id inside `handle`, or undefined when it is malformed or its MAC is wrong. */
  verify(handle: string): string | undefined {
    const known = this.verified.get(handle);
    if (known !== undefined) return known;
    if (handle.length > 512) return undefined;
    const dot = handle.indexOf('.');
    if (dot <= 0 || dot !== handle.lastIndexOf('.')) return undefined;
    const id = Buffer.from(handle.slice(0, dot), 'base64url').toString('utf8');
    const given = Buffer.from(handle.slice(dot + 1), 'base64url');
    const expected = this.mac(id);
    if (id === '' || given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    if (this.verified.size >= MAX_VERIFIED) this.verified.clear();
    this.verified.set(handle, id);
    return id;
  }

  private mac(id: string): Buffer {
    return createHmac('sha256', this.key).update(id).digest();
  }
}

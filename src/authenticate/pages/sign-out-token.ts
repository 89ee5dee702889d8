import { createHmac, timingSafeEqual } from 'node:crypto';
import { deriveKey } from '../../shared/key-schedule.js';

/**
 * The sign-out CSRF token of a session: base64url HMAC-SHA256 of the session id under a key
 * derived from `shared_secret` ('sign-out-csrf'). Only a page that can read the session (the user
 * page, the sign-out confirmation) can show it, so a cross-site form or link cannot sign a user
 * out; every replica computes the same token, and it dies with the session.
 */
export function signOutToken(sharedSecret: Uint8Array, sessionId: string): string {
  return createHmac('sha256', deriveKey(sharedSecret, 'sign-out-csrf')).update(sessionId).digest('base64url');
}

/** Whether `token` is `sessionId`'s sign-out token (constant-time compare; undefined is never valid). */
export function isSignOutToken(
  sharedSecret: Uint8Array,
  sessionId: string,
  token: string | undefined,
): boolean {
  if (token === undefined) return false;
  const expected = Buffer.from(signOutToken(sharedSecret, sessionId));
  const given = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

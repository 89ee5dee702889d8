/** Wording and small helpers the sign-in handlers share. */
import { timingSafeEqual } from 'node:crypto';
import type { FlowFailure } from '../flow/sealed.js';
import type { AuthenticateSettings } from '../types.js';

/** What went wrong with a sealed value, for a page: `The sign-in link ${failureText(reason)}.` */
export function failureText(reason: FlowFailure): string {
  switch (reason) {
    case 'expired':
      return 'has expired';
    case 'wrong-purpose':
      return 'was made for another step of sign-in';
    case 'tampered':
      return 'is not valid (it was altered, or made with another key)';
    case 'malformed':
      return 'is not readable';
  }
}

/** The IdP's redirect URI: the callback path on the authenticate host. */
export function callbackUrl(settings: AuthenticateSettings): string {
  return new URL(settings.callbackPath, settings.authenticateUrl).href;
}

/** Constant-time equality of two strings (CSRF tokens). */
export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** `text` cut to `max` characters (IdP-supplied text on a page stays short). */
export function clip(text: string, max = 300): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

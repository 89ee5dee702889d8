/**
 * Sealed flow values: small JSON objects encrypted and authenticated as JWTs (JWE compact, `dir` +
 * A256GCM, through jose) under a key derived per purpose (keys.ts), with an expiry. The purpose is
 * also in the protected header (`typ`), which A256GCM authenticates, so a value sealed for one use
 * opened as another is reported as such instead of as a bare decryption failure.
 */
import { EncryptJWT, decodeProtectedHeader, errors, jwtDecrypt, type JWTPayload } from 'jose';
import { deriveKey, type KeyPurpose } from '../../shared/key-schedule.js';

/** The purposes a flow value can be sealed for (a subset of the key purposes). */
export type FlowPurpose = Extract<
  KeyPurpose,
  'sign-in-state' | 'flow-cookie' | 'handoff' | 'programmatic-request'
>;

/** Why a sealed value did not open; safe to show and log (never the contents). */
export type FlowFailure = 'expired' | 'wrong-purpose' | 'tampered' | 'malformed';

/**
 * A sealed value that did not open: `reason` names what failed without its contents. For an
 * expired value the (authentic) payload is kept in `expiredPayload`, so a caller can offer the
 * original destination again; it is never in the message.
 */
export class FlowTokenError extends Error {
  constructor(
    readonly purpose: FlowPurpose,
    readonly reason: FlowFailure,
    readonly expiredPayload?: JWTPayload,
  ) {
    super(`${purpose} ${reason}`);
    this.name = 'FlowTokenError';
  }
}

const TYP_PREFIX = 'portcullis-';
/** Longest sealed value accepted (cookies and query values stay far below). */
const MAX_SEALED_LENGTH = 8192;

/**
 * Seals `payload` for `purpose` with a key derived from `secret`, valid from `now` (ms) for
 * `lifetimeMs` (whole seconds, rounded up: JWT times are seconds).
 */
export async function seal(
  secret: Uint8Array,
  purpose: FlowPurpose,
  payload: JWTPayload,
  now: number,
  lifetimeMs: number,
): Promise<string> {
  const issuedAt = Math.floor(now / 1000);
  return new EncryptJWT(payload)
    .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', typ: `${TYP_PREFIX}${purpose}` })
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + Math.ceil(lifetimeMs / 1000))
    .encrypt(deriveKey(secret, purpose));
}

/**
 * Opens what `seal` sealed for `purpose` under `secret`, at `now` (ms). Throws FlowTokenError:
 * `wrong-purpose` (sealed for another use), `tampered` (altered, or another key), `expired`, or
 * `malformed` (not a sealed value at all).
 */
export async function open(
  secret: Uint8Array,
  purpose: FlowPurpose,
  sealed: string,
  now: number,
): Promise<JWTPayload> {
  if (sealed.length === 0 || sealed.length > MAX_SEALED_LENGTH)
    throw new FlowTokenError(purpose, 'malformed');
  let typ: unknown;
  try {
    typ = decodeProtectedHeader(sealed).typ;
  } catch {
    throw new FlowTokenError(purpose, 'malformed');
  }
  if (typeof typ === 'string' && typ.startsWith(TYP_PREFIX) && typ !== `${TYP_PREFIX}${purpose}`)
    throw new FlowTokenError(purpose, 'wrong-purpose');
  try {
    const { payload } = await jwtDecrypt(sealed, deriveKey(secret, purpose), {
      keyManagementAlgorithms: ['dir'],
      contentEncryptionAlgorithms: ['A256GCM'],
      typ: `${TYP_PREFIX}${purpose}`,
      currentDate: new Date(now),
      requiredClaims: ['exp', 'iat'],
    });
    return payload;
  } catch (error) {
    if (error instanceof errors.JWTExpired) throw new FlowTokenError(purpose, 'expired', error.payload);
    if (error instanceof errors.JWEInvalid || error instanceof errors.JWTInvalid)
      throw new FlowTokenError(purpose, 'malformed');
    throw new FlowTokenError(purpose, 'tampered');
  }
}

/** A string field of an opened payload, or a `malformed` FlowTokenError. */
export function textField(purpose: FlowPurpose, payload: JWTPayload, name: string): string {
  const value = payload[name];
  if (typeof value !== 'string' || value === '') throw new FlowTokenError(purpose, 'malformed');
  return value;
}

/** An optional string field: undefined when absent, `malformed` when present but not a string. */
export function optionalTextField(
  purpose: FlowPurpose,
  payload: JWTPayload,
  name: string,
): string | undefined {
  const value = payload[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw new FlowTokenError(purpose, 'malformed');
  return value;
}

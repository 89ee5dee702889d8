/**
 * The short-lived token one Portcullis service presents to another over internal gRPC (the
 * databroker today; authorize and authenticate named for split deployments). Both sides derive
 * and check it through this module.
 *
 * Why its own key and pinned claims (security-threats.md 1.1 item 11, CVE-2024-47616: an
 * internal JWT check that did not pin audience or purpose let user tokens through): the HMAC key
 * is HKDF-SHA256 over `shared_secret` with a label of its own, so no other secret Portcullis
 * derives (signing key, gRPC credential, cookie keys) and not the raw secret itself can make a
 * token that verifies; and verification pins the algorithm (HS256 only, so neither `none` nor an
 * ES256 identity assertion passes), the type, issuer and audience (a token for the databroker is
 * refused by authorize), and requires `exp` and `iat` with a lifetime of at most five minutes, so
 * a leaked token is useless soon after. The token is a secret: never log it.
 */
import { deriveKey } from '../shared/key-schedule.js';
import { SignJWT, jwtVerify } from 'jose';

/** The internal services a token can be minted for; each is its own audience. */
export type InternalAudience = 'databroker' | 'authorize' | 'authenticate';

/** Every token's `iss`. */
export const INTERNAL_TOKEN_ISSUER = 'portcullis-internal';

/** The JOSE `typ` header: one more thing a JWT minted for another purpose does not carry. */
const TOKEN_TYPE = 'portcullis-internal+jwt';

/** Lifetime of a minted token, and the longest lifetime verification accepts (seconds). */
export const INTERNAL_TOKEN_LIFETIME_S = 5 * 60;

/** Clock difference between instances that verification tolerates (seconds). */
const CLOCK_TOLERANCE_S = 30;

/** The `aud` of tokens for `audience`. */
export function internalTokenAudience(audience: InternalAudience): string {
  return `portcullis-${audience}`;
}

/** The HMAC key for `sharedSecret`: HKDF-SHA256, empty salt, this module's label, 32 bytes. */
function tokenKey(sharedSecret: Uint8Array): Uint8Array {
  if (sharedSecret.length === 0) throw new RangeError('shared secret is empty');
  return deriveKey(sharedSecret, 'internal-token');
}

/**
 * A token for calls to `audience`, valid from `now` (Unix ms) for five minutes: HS256 under the
 * key derived from `sharedSecret`, with iss, aud, iat and exp.
 */
export async function mintInternalToken(
  sharedSecret: Uint8Array,
  audience: InternalAudience,
  now: number,
): Promise<string> {
  const iat = Math.floor(now / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: TOKEN_TYPE })
    .setIssuer(INTERNAL_TOKEN_ISSUER)
    .setAudience(internalTokenAudience(audience))
    .setIssuedAt(iat)
    .setExpirationTime(iat + INTERNAL_TOKEN_LIFETIME_S)
    .sign(tokenKey(sharedSecret));
}

/**
 * When `token` is a valid internal token for `audience` at `now` (Unix ms) under `sharedSecret`:
 * its expiry in Unix ms (callers may remember the token until then). Otherwise undefined, for any
 * reason: a malformed token, another algorithm or type, key, issuer or audience, missing `exp` or
 * `iat`, expired, issued in the future, or a lifetime (exp - iat) over five minutes. Comparisons with `now` allow 30 s of clock skew.
 */
export async function verifyInternalTokenExpiry(
  token: string,
  sharedSecret: Uint8Array,
  audience: InternalAudience,
  now: number,
): Promise<number | undefined> {
  try {
    const { payload } = await jwtVerify(token, tokenKey(sharedSecret), {
      algorithms: ['HS256'],
      typ: TOKEN_TYPE,
      issuer: INTERNAL_TOKEN_ISSUER,
      audience: internalTokenAudience(audience),
      requiredClaims: ['exp', 'iat'],
      // Also refuses an `iat` in the future (beyond the tolerance).
      maxTokenAge: INTERNAL_TOKEN_LIFETIME_S + CLOCK_TOLERANCE_S,
      clockTolerance: CLOCK_TOLERANCE_S,
      currentDate: new Date(now),
    });
    const { exp, iat } = payload;
    if (exp === undefined || iat === undefined) return undefined;
    if (exp - iat > INTERNAL_TOKEN_LIFETIME_S) return undefined;
    return exp * 1000;
  } catch {
    return undefined;
  }
}

/** Whether `token` is a valid internal token for `audience` at `now` (see verifyInternalTokenExpiry). */
export async function verifyInternalToken(
  token: string,
  sharedSecret: Uint8Array,
  audience: InternalAudience,
  now: number,
): Promise<boolean> {
  return (await verifyInternalTokenExpiry(token, sharedSecret, audience, now)) !== undefined;
}

/**
 * The key schedule: every key Portcullis derives from `shared_secret` or `cookie_secret`, in one
 * table. Each purpose has its own HKDF-SHA256 salt and info, so no two purposes can ever share a
 * key (a value sealed for one use never opens as another), and a new key is a new row here,
 * nowhere else. The salts and infos are the ones deployments already use: changing one would
 * break every session, sealed record, handle, credential and derived certificate of a running
 * fleet at upgrade (test/unit/shared/key-vectors.test.ts pins them).
 */
import { createECDH, hkdfSync } from 'node:crypto';

/** One row of the schedule: HKDF-SHA256 salt and info, and the bytes it yields. */
interface KeyRow {
  readonly salt: string;
  readonly info: string;
  readonly bytes: number;
}

/** The authenticate service's sealed values, each under its own key. */
const AUTHENTICATE_PURPOSES = [
  'sign-in-state',
  'flow-cookie',
  'handoff',
  'programmatic-request',
  'session-tokens',
  'sign-out-csrf',
] as const;

const authenticateRows = Object.fromEntries(
  AUTHENTICATE_PURPOSES.map((purpose) => [
    purpose,
    { salt: 'portcullis/authenticate', info: `portcullis/${purpose}`, bytes: 32 },
  ]),
) as Record<(typeof AUTHENTICATE_PURPOSES)[number], KeyRow>;

/** Every derived key by purpose. */
export const KEY_SCHEDULE = {
  ...authenticateRows,
  /** HMAC of session handles (session/handle.ts). */
  'session-handle': { salt: 'portcullis/session-handle', info: 'hmac-sha256', bytes: 32 },
  /** HS256 of internal service-to-service tokens (contract/internal-token.ts). */
  'internal-token': { salt: '', info: 'portcullis internal token v1', bytes: 32 },
  /** The gRPC credential Envoy presents, outside all-in-one mode (contract/grpc-credential.ts). */
  'grpc-credential': { salt: '', info: 'portcullis grpc credential v1', bytes: 32 },
  /** A256GCM of records at rest (databroker/sealed-records.ts). */
  'databroker-records': { salt: '', info: 'portcullis databroker records v1', bytes: 32 },
  /** The self-signed fallback listener certificate's P-256 key. */
  'fallback-tls': { salt: '', info: 'portcullis fallback tls v1', bytes: 48 },
  /** The `tls_derive` internal CA's P-256 key. */
  'tls-derive-ca': { salt: '', info: 'portcullis tls_derive ca v1', bytes: 48 },
  /** The `tls_derive` service certificate's P-256 key. */
  'tls-derive-service': { salt: '', info: 'portcullis tls_derive service v1', bytes: 48 },
  /**
   * The ES256 key that signs decision tokens, which Envoy verifies to replay an allow Portcullis
   * already made (the fast path): derived, so every instance's Envoys accept every instance's tokens.
   */
  'decision-token': { salt: 'portcullis/decision-token', info: 'es256 v1', bytes: 48 },
} as const satisfies Record<string, KeyRow>;

/** A purpose of the key schedule. */
export type KeyPurpose = keyof typeof KEY_SCHEDULE;

/** A purpose whose key is raw bytes for a symmetric algorithm (HMAC, AES, HKDF output). */
export type AuthenticatePurpose = (typeof AUTHENTICATE_PURPOSES)[number];

/** The key for `purpose` derived from `secret`: HKDF-SHA256 with the purpose's salt and info. */
export function deriveKey(secret: Uint8Array, purpose: KeyPurpose): Uint8Array {
  if (secret.length === 0) throw new RangeError('the secret to derive from is empty');
  const row: KeyRow = KEY_SCHEDULE[purpose];
  return new Uint8Array(hkdfSync('sha256', secret, row.salt, row.info, row.bytes));
}

/** The order n of P-256's group: a private scalar lies in [1, n-1]. */
export const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

/** A P-256 private scalar (32 bytes, big-endian) and its uncompressed public point (65 bytes). */
export interface P256KeyBytes {
  readonly d: Buffer;
  readonly point: Buffer;
}

/**
 * The P-256 key for `purpose` (a 48-byte row): the HKDF output reduced into [1, n-1] (FIPS 186-4
 * B.4.1: the 128 extra bits make the bias negligible), the public point from node:crypto's ECDH.
 * Same secret and purpose, same key.
 */
export function deriveP256(
  secret: Uint8Array,
  purpose: 'fallback-tls' | 'tls-derive-ca' | 'tls-derive-service' | 'decision-token',
): P256KeyBytes {
  const okm = Buffer.from(deriveKey(secret, purpose));
  const scalar = (BigInt(`0x${okm.toString('hex')}`) % (P256_ORDER - 1n)) + 1n;
  return p256FromScalar(Buffer.from(scalar.toString(16).padStart(64, '0'), 'hex'));
}

/**
 * The identity-assertion signing key derived from `shared_secret` (when no `signing_key` is set).
 * It predates the reduction above and is kept as deployed: 32 bytes of HKDF-SHA256 (salt
 * `portcullis/identity-assertion`, info `es256/<counter>`), the first counter whose bytes are a
 * valid scalar; upstreams that cache the JWKS keep verifying across the upgrade.
 */
export function deriveIdentitySigningP256(secret: Uint8Array): P256KeyBytes | undefined {
  for (let counter = 0; counter < 16; counter++) {
    const bytes = Buffer.from(
      hkdfSync('sha256', secret, 'portcullis/identity-assertion', `es256/${counter}`, 32),
    );
    const scalar = BigInt(`0x${bytes.toString('hex')}`);
    if (scalar !== 0n && scalar < P256_ORDER) return p256FromScalar(bytes);
  }
  return undefined;
}

function p256FromScalar(d: Buffer): P256KeyBytes {
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(d);
  return { d, point: ecdh.getPublicKey() };
}

/** Every (salt, info) of the schedule, for the test that they are all distinct. */
export function scheduleLabels(): string[] {
  return [
    ...Object.values(KEY_SCHEDULE).map((row: KeyRow) => `${row.salt}\u0000${row.info}`),
    'portcullis/identity-assertion\u0000es256/<counter>',
  ];
}

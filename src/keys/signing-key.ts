import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import { PortcullisError } from '../shared/errors.js';
import { deriveIdentitySigningP256, deriveP256, type P256KeyBytes } from '../shared/key-schedule.js';

/** A key that signs identity assertions, with its public JWK (including `kid`) for the JWKS. */
export interface SigningKey {
  readonly alg: 'ES256' | 'ES384' | 'ES512' | 'RS256';
  readonly kid: string;
  readonly privateKey: KeyObject;
  readonly publicJwk: JWK;
}

/**
 * Loads `signing_key` (PEM). The algorithm follows the key, as the spec says: ES256 for P-256,
 * ES384 for P-384, ES512 for P-521, RS256 for RSA of 2048 bits or more. Ed25519 (removed upstream in 0.13) and
 * anything else are refused with a message naming the key.
 */
export function loadSigningKey(pem: string): SigningKey {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch {
    throw new PortcullisError('SIGNING_KEY_INVALID', 'signing_key: not a PEM private key');
  }
  const type = privateKey.asymmetricKeyType;
  const details = privateKey.asymmetricKeyDetails ?? {};
  let alg: SigningKey['alg'];
  if (type === 'ec' && details.namedCurve === 'prime256v1') alg = 'ES256';
  else if (type === 'ec' && details.namedCurve === 'secp384r1') alg = 'ES384';
  else if (type === 'ec' && details.namedCurve === 'secp521r1') alg = 'ES512';
  else if (type === 'rsa' && (details.modulusLength ?? 0) >= 2048) alg = 'RS256';
  else if (type === 'ed25519') {
    throw new PortcullisError(
      'SIGNING_KEY_INVALID',
      'signing_key: Ed25519 keys are not supported; use an ECDSA P-256 or RSA key',
    );
  } else {
    throw new PortcullisError(
      'SIGNING_KEY_INVALID',
      `signing_key: unsupported key (${type ?? 'unknown'}); use ECDSA P-256/P-384 or RSA of 2048 bits or more`,
    );
  }
  return withPublicJwk(alg, privateKey);
}

/**
 * Derives the ES256 signing key from `shared_secret` when no `signing_key` is configured, so every
 * replica signs with the same key and upstreams caching the JWKS keep verifying across restarts
 * (the key schedule's identity-assertion key, shared/key-schedule.ts).
 */
export function deriveSigningKey(sharedSecret: Uint8Array): SigningKey {
  const key = deriveIdentitySigningP256(sharedSecret);
  if (key === undefined)
    throw new PortcullisError('SIGNING_KEY_INVALID', 'shared_secret: cannot derive a signing key');
  return es256Key(key);
}

/**
 * The ES256 key that signs decision tokens (the fast path), derived from `shared_secret` through
 * the key schedule, never configured: every instance must sign with it and every Envoy verify it.
 * It is a different key from the identity signing key, so an identity assertion an upstream
 * received never verifies as a decision token.
 */
export function deriveDecisionKey(sharedSecret: Uint8Array): SigningKey {
  return es256Key(deriveP256(sharedSecret, 'decision-token'));
}

/** An ES256 signing key from a P-256 scalar and point. */
function es256Key(key: P256KeyBytes): SigningKey {
  const jwk = {
    kty: 'EC',
    crv: 'P-256',
    d: key.d.toString('base64url'),
    x: key.point.subarray(1, 33).toString('base64url'),
    y: key.point.subarray(33, 65).toString('base64url'),
  };
  return withPublicJwk('ES256', createPrivateKey({ key: jwk, format: 'jwk' }));
}

function withPublicJwk(alg: SigningKey['alg'], privateKey: KeyObject): SigningKey {
  const exported = createPublicKey(privateKey).export({ format: 'jwk' }) as JWK;
  const kid = jwkThumbprint(exported);
  return { alg, kid, privateKey, publicJwk: { ...exported, kid, alg, use: 'sig' } };
}

/** The JWKS document served at `/.well-known/portcullis/jwks.json`. */
export function jwksOf(keys: readonly SigningKey[]): { keys: JWK[] } {
  return { keys: keys.map((key) => key.publicJwk) };
}

/**
 * RFC 7638 JWK thumbprint (SHA-256, base64url) over the required members in lexicographic order,
 * computed synchronously so keys can be prepared inside the (synchronous) config pipeline.
 */
export function jwkThumbprint(jwk: JWK): string {
  const members =
    jwk.kty === 'EC'
      ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }
      : { e: jwk.e, kty: jwk.kty, n: jwk.n };
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
}

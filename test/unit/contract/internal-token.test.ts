// Internal gRPC tokens (security-threats.md 1.1 item 11, CVE-2024-47616): only a token minted for
// the same audience under the key derived from shared_secret, within its five minutes, verifies.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SignJWT, UnsecuredJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import {
  INTERNAL_TOKEN_ISSUER,
  mintInternalToken,
  verifyInternalToken,
  verifyInternalTokenExpiry,
} from '../../../src/contract/internal-token.js';
import { deriveSigningKey } from '../../../src/keys/signing-key.js';
import { deriveGrpcCredential } from '../../../src/contract/grpc-credential.js';

const SECRET = new Uint8Array(32).fill(7);
const OTHER_SECRET = new Uint8Array(32).fill(8);
const NOW = Date.UTC(2026, 10, 25, 12, 0, 0);
const S = 1000;

/** The claims a real token carries, for forgeries that differ only in how they are signed. */
function claims(now: number): { iss: string; aud: string; iat: number; exp: number } {
  const iat = Math.floor(now / 1000);
  return { iss: INTERNAL_TOKEN_ISSUER, aud: 'portcullis-databroker', iat, exp: iat + 300 };
}

test('a minted token verifies for its audience until it expires, and names its expiry', async () => {
  const token = await mintInternalToken(SECRET, 'databroker', NOW);
  assert.deepEqual(decodeProtectedHeader(token), { alg: 'HS256', typ: 'portcullis-internal+jwt' });
  assert.deepEqual(decodeJwt(token), claims(NOW));
  assert.equal(await verifyInternalToken(token, SECRET, 'databroker', NOW), true);
  assert.equal(await verifyInternalToken(token, SECRET, 'databroker', NOW + 299 * S), true);
  assert.equal(await verifyInternalTokenExpiry(token, SECRET, 'databroker', NOW), NOW + 300 * S);
});

test('an expired token is refused (past the 30 s clock tolerance)', async () => {
  const token = await mintInternalToken(SECRET, 'databroker', NOW);
  assert.equal(await verifyInternalToken(token, SECRET, 'databroker', NOW + 331 * S), false);
  assert.equal(await verifyInternalToken(token, SECRET, 'databroker', NOW + 3600 * S), false);
});

test('a token issued in the future (beyond the tolerance) is refused', async () => {
  const token = await mintInternalToken(SECRET, 'databroker', NOW + 120 * S);
  assert.equal(await verifyInternalToken(token, SECRET, 'databroker', NOW), false);
});

test('a token for another audience, or under another secret, is refused', async () => {
  const forAuthorize = await mintInternalToken(SECRET, 'authorize', NOW);
  assert.equal(await verifyInternalToken(forAuthorize, SECRET, 'databroker', NOW), false);
  assert.equal(await verifyInternalToken(forAuthorize, SECRET, 'authorize', NOW), true);
  const otherKey = await mintInternalToken(OTHER_SECRET, 'databroker', NOW);
  assert.equal(await verifyInternalToken(otherKey, SECRET, 'databroker', NOW), false);
});

test('a user identity assertion (ES256 by the signing key derived from the same secret) is refused', async () => {
  const key = deriveSigningKey(SECRET);
  const assertion = await new SignJWT({ ...claims(NOW), email: 'user@corp.test', sub: 'user' })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'portcullis-internal+jwt' })
    .sign(key.privateKey);
  assert.equal(await verifyInternalToken(assertion, SECRET, 'databroker', NOW), false);
});

test('alg none is refused', async () => {
  const unsecured = new UnsecuredJWT(claims(NOW)).encode();
  assert.equal(await verifyInternalToken(unsecured, SECRET, 'databroker', NOW), false);
});

test('HS256 under the raw shared_secret, or under the gRPC credential, is refused', async () => {
  const sign = (key: Uint8Array): Promise<string> =>
    new SignJWT(claims(NOW)).setProtectedHeader({ alg: 'HS256', typ: 'portcullis-internal+jwt' }).sign(key);
  assert.equal(await verifyInternalToken(await sign(SECRET), SECRET, 'databroker', NOW), false);
  const credential = new TextEncoder().encode(deriveGrpcCredential(SECRET));
  assert.equal(await verifyInternalToken(await sign(credential), SECRET, 'databroker', NOW), false);
});

test('a tampered token is refused (claims, signature, or garbage)', async () => {
  const token = await mintInternalToken(SECRET, 'authorize', NOW);
  const [header, , signature] = token.split('.');
  const payload = Buffer.from(JSON.stringify({ ...claims(NOW) })).toString('base64url');
  assert.equal(
    await verifyInternalToken(`${header}.${payload}.${signature}`, SECRET, 'databroker', NOW),
    false,
  );
  const flipped = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
  assert.equal(await verifyInternalToken(flipped, SECRET, 'authorize', NOW), false);
  assert.equal(await verifyInternalToken('', SECRET, 'authorize', NOW), false);
  assert.equal(await verifyInternalToken('not.a.jwt', SECRET, 'authorize', NOW), false);
});

test('a validly signed token with a lifetime over five minutes, or without exp, is refused', async () => {
  // Only a holder of the derived key can make these; they pin the checks beyond the signature.
  const { hkdfSync } = await import('node:crypto');
  const key = new Uint8Array(
    hkdfSync('sha256', SECRET, new Uint8Array(0), 'portcullis internal token v1', 32),
  );
  const sign = (body: Record<string, unknown>): Promise<string> =>
    new SignJWT(body).setProtectedHeader({ alg: 'HS256', typ: 'portcullis-internal+jwt' }).sign(key);
  const valid = claims(NOW);
  assert.equal(await verifyInternalToken(await sign(valid), SECRET, 'databroker', NOW), true);
  const long = { ...valid, exp: valid.iat + 3600 };
  assert.equal(await verifyInternalToken(await sign(long), SECRET, 'databroker', NOW), false);
  const { exp: _exp, ...noExp } = valid;
  assert.equal(await verifyInternalToken(await sign(noExp), SECRET, 'databroker', NOW), false);
  const { iat: _iat, ...noIat } = valid;
  assert.equal(await verifyInternalToken(await sign(noIat), SECRET, 'databroker', NOW), false);
  const untyped = await new SignJWT(valid).setProtectedHeader({ alg: 'HS256' }).sign(key);
  assert.equal(await verifyInternalToken(untyped, SECRET, 'databroker', NOW), false);
});

// The key ring (src/keys/key-ring.ts): one per config, built from the config's secrets; an unchanged
// secret keeps every derived key as the same object (so the authorizer keeps its signer and the
// snapshot its JWKS), a changed one derives anew; every derived key equals what the key schedule
// and its callers derive from the same secret (the pinned vectors in shared/key-vectors.test.ts
// hold those bytes).
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import { buildKeyRing, type KeySecrets } from '../../../src/keys/key-ring.js';
import { deriveDecisionKey, deriveSigningKey, loadSigningKey } from '../../../src/keys/signing-key.js';
import { deriveGrpcCredential } from '../../../src/contract/grpc-credential.js';
import { deriveInternalTlsSync } from '../../../src/pki/derived-tls.js';
import { SessionHandles } from '../../../src/session/handle.js';
import { Secret } from '../../../src/shared/secret.js';

const SHARED = Buffer.alloc(32, 7);
const OTHER = Buffer.alloc(32, 9);

function secrets(overrides: Partial<KeySecrets> = {}): KeySecrets {
  return {
    sharedSecret: SHARED,
    cookieSecret: Buffer.alloc(32, 8),
    generated: { sharedSecret: false, cookieSecret: false },
    signingKeyPems: undefined,
    tlsDerive: undefined,
    idpClientSecrets: new Map([['idp-1', new Secret('client-secret')]]),
    metricsBasicAuth: undefined,
    databrokerConnection: undefined,
    ...overrides,
  };
}

test('every derived key is what the key schedule derives from the same secret', () => {
  const ring = buildKeyRing(secrets({ tlsDerive: 'portcullis.internal' }));
  assert.equal(ring.grpcCredential, deriveGrpcCredential(SHARED));
  assert.equal(ring.decisionKey.kid, deriveDecisionKey(SHARED).kid);
  assert.deepEqual(ring.signingKey.publicJwk, deriveSigningKey(SHARED).publicJwk);
  assert.equal(ring.handles.issue('session-1'), new SessionHandles(SHARED).issue('session-1'));
  assert.equal(ring.internalTls?.caPem, deriveInternalTlsSync(SHARED, 'portcullis.internal').caPem);
  assert.equal(JSON.parse(ring.jwksJson).keys[0].kid, ring.signingKey.kid);
  const fallback = ring.fallbackCertificate(['a.example.com']);
  assert.match(fallback.certPem, /BEGIN CERTIFICATE/);
  assert.equal(buildKeyRing(secrets()).internalTls, undefined, 'no tls_derive, no derived TLS');
});

test('unchanged secrets keep the derived keys as the same objects; other secrets follow the config', () => {
  const first = buildKeyRing(secrets());
  const metrics = new Secret('user:pass');
  const second = buildKeyRing(secrets({ metricsBasicAuth: metrics }), first);
  assert.equal(second.signingKey, first.signingKey);
  assert.equal(second.decisionKey, first.decisionKey);
  assert.equal(second.handles, first.handles);
  assert.equal(second.fallbackCertificate, first.fallbackCertificate);
  assert.equal(second.metricsBasicAuth, metrics, 'configured secrets are this config’s');
});

test('a changed shared secret, signing key or tls_derive name derives anew', () => {
  const first = buildKeyRing(secrets());
  const otherSecret = buildKeyRing(secrets({ sharedSecret: OTHER }), first);
  assert.notEqual(otherSecret.signingKey, first.signingKey);
  assert.notEqual(otherSecret.grpcCredential, first.grpcCredential);
  const pem = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  const configured = buildKeyRing(secrets({ signingKeyPems: new Secret([pem]) }), first);
  assert.deepEqual(configured.signingKey.publicJwk, loadSigningKey(pem).publicJwk);
  assert.equal(configured.grpcCredential, first.grpcCredential);
  const derived = buildKeyRing(secrets({ tlsDerive: 'portcullis.internal' }), first);
  assert.equal(derived.internalTls?.serverName, 'portcullis.internal');
});

test('configured secrets in the ring print redacted', () => {
  const ring = buildKeyRing(secrets({ metricsBasicAuth: new Secret('user:hunter2') }));
  const printed = JSON.stringify({ ...ring, idpClientSecrets: [...ring.idpClientSecrets] });
  assert.doesNotMatch(printed, /hunter2|client-secret/);
});

test('several signing keys: the first signs, every one is in the JWKS; dropping one leaves the JWKS', () => {
  const pemOf = (): string =>
    generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
  const [next, current] = [pemOf(), pemOf()];
  const rotating = buildKeyRing(secrets({ signingKeyPems: new Secret([next, current]) }));
  const kids = (ring: typeof rotating): string[] =>
    (JSON.parse(ring.jwksJson) as { keys: { kid: string }[] }).keys.map((key) => key.kid);
  assert.deepEqual(kids(rotating), [loadSigningKey(next).kid, loadSigningKey(current).kid]);
  assert.equal(rotating.signingKey.kid, loadSigningKey(next).kid, 'the first key signs');
  const done = buildKeyRing(secrets({ signingKeyPems: new Secret([next]) }), rotating);
  assert.deepEqual(kids(done), [loadSigningKey(next).kid], 'the old key is no longer published');
});

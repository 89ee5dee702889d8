// Every key Portcullis derives from `shared_secret` or `cookie_secret`, pinned as it is deployed
// today: a refactor of the derivations (one key schedule) must keep each byte-identical, or every
// session, sealed record, handle, credential and derived certificate of a running fleet breaks at
// upgrade. The secret is a fixed test value; each vector is what today's code derives from it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deriveKey, scheduleLabels, type AuthenticatePurpose } from '../../../src/shared/key-schedule.js';
import { deriveDecisionKey, deriveSigningKey } from '../../../src/keys/signing-key.js';
import { deriveGrpcCredential } from '../../../src/contract/grpc-credential.js';
import { mintInternalToken } from '../../../src/contract/internal-token.js';
import { MemoryBackend } from '../../../src/databroker/memory-backend.js';
import { SealedRecords } from '../../../src/databroker/sealed-records.js';
import { deriveP256Key, type P256Purpose } from '../../../src/pki/x509-build.js';
import { SessionHandles } from '../../../src/session/handle.js';
import { silentLogger } from '../../../src/shared/logger.js';

const SECRET = Buffer.alloc(32, 1);
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

test('authenticate keys (sealed sign-in state, flow cookie, handoff, programmatic request, session tokens, sign-out CSRF)', () => {
  const expected: Record<AuthenticatePurpose, string> = {
    'sign-in-state': 'bb8e08a80953bb378bf83a314e6e6e7c77a8400d400388e4326f0159badb1723',
    'flow-cookie': 'aeca759553c2ea9553b848f2d15c6a02c0f9e5afd1d2e5bf5cfa2dfe1fa5506f',
    handoff: 'b1ac46c008928d6a3166003272ed08b1c322173abfcfc5faa5918f8c924b50a5',
    'programmatic-request': 'd6c0457c9e5c3a7d37f1ba2527d5504e4d77ae102eefda4000d43e57ea682e01',
    'session-tokens': '451d786e745d24fbdd630e7fcfab1dbfb424a8a280df3cb7919521f56ca1e6d4',
    'sign-out-csrf': '10273b7da17025f5aa6dc05f294a055abf46b0d367869da7da9fd30bb792d290',
  };
  for (const [purpose, key] of Object.entries(expected))
    assert.equal(hex(deriveKey(SECRET, purpose as AuthenticatePurpose)), key, purpose);
});

test('session handle, gRPC credential and internal token', async () => {
  assert.equal(
    new SessionHandles(SECRET).issue('session-1'),
    'c2Vzc2lvbi0x.IpdOTa5Oi9jatlxt9vMUXQ5YHRh9FggcNRxILpOVyq8',
  );
  assert.equal(deriveGrpcCredential(SECRET), 'i752HWPi2Tsg9pr27tPOVMG9ZaU0uHaOwl-zKeSKakI');
  assert.equal(
    await mintInternalToken(SECRET, 'databroker', 0),
    'eyJhbGciOiJIUzI1NiIsInR5cCI6InBvcnRjdWxsaXMtaW50ZXJuYWwrand0In0.eyJpc3MiOiJwb3J0Y3VsbGlzLWludGVybmFsIiwiYXVkIjoicG9ydGN1bGxpcy1kYXRhYnJva2VyIiwiaWF0IjowLCJleHAiOjMwMH0.zS0mbnFjAy4uNXl3uWxJUd7VvbWtCt_tyTvqvRgTnJE',
  );
});

test('identity-assertion signing key and the P-256 keys of the fallback and tls_derive certificates', () => {
  assert.equal(deriveSigningKey(SECRET).kid, '51CUbXDu6eWOvsARbOP2SSTUaemiDHEDCHcgmcvtpZ0');
  const p256: Record<P256Purpose, string> = {
    'fallback-tls': '1be99506fbffd48e7db8b5d45e7d7e2ab717686d0d20f32daa77e635d91fb6fb',
    'tls-derive-ca': '69f640b8defecc18b00763cabf3872c181181ca9d6aadc1be801f7e92daab3fc',
    'tls-derive-service': '35ed786806a32030bc7f5a1a14c6c073f4d6b9c619031c6c7e155199a9125246',
    // The decision-token key (the fast path): new, pinned from its first version on.
    'decision-token': '3192cf82808fd4b2eeec4b48d02b97aff1c7ef16f71ade958287e886f0d7f3a3',
  };
  for (const [purpose, d] of Object.entries(p256))
    assert.equal(hex(deriveP256Key(SECRET, purpose as P256Purpose).d), d, purpose);
  assert.equal(deriveDecisionKey(SECRET).kid, 'mhmZkEeHM9ElI5hhlovjbCbfmTMsp5Q30sXL4buTgfM');
  assert.notEqual(deriveDecisionKey(SECRET).kid, deriveSigningKey(SECRET).kid, 'two keys, two purposes');
});

test('a session record sealed at rest today still opens', async () => {
  const backend = new MemoryBackend();
  await backend.put(
    'session',
    'vector-1',
    'eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIiwicnR5cGUiOiJzZXNzaW9uIiwicmlkIjoidmVjdG9yLTEifQ..sfBNLUmfSiSPDlF-.Reg6vX7UUzuHtV6zxc4mmvNwHqDnsFE3LH53.LhKAbe8PWmhYO1EsJq0lfQ',
  );
  const records = new SealedRecords(backend, { secret: () => SECRET, logger: silentLogger });
  assert.deepEqual((await records.get('session', 'vector-1'))?.value, { email: 'ada@example.com' });
});

test('every purpose of the key schedule has its own salt and info', () => {
  const labels = scheduleLabels();
  assert.equal(new Set(labels).size, labels.length, labels.join('\n'));
});

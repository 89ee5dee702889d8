// tls_derive (derived-tls.ts): the same secret gives the same CA and service certificate, byte for
// byte, on every derivation (deterministic ECDSA), so every instance trusts every other and a
// restarted one compiles the same clusters; another
// secret gives another CA. Checked with node:crypto's X509Certificate (OpenSSL) and `openssl verify`
// in strict mode; BoringSSL (Envoy) is checked in test/integration/internal-tls.test.ts.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { deriveInternalTls } from '../../../src/pki/derived-tls.js';

const SECRET = new Uint8Array(32).fill(11);
const NAME = 'portcullis.internal';

test('two derivations from one secret give the same bytes; the service certificate is right', async () => {
  const a = await deriveInternalTls(SECRET, NAME);
  const b = await deriveInternalTls(SECRET, NAME);
  assert.deepEqual(a, b, 'every derivation gives the same CA, certificate and key');
  assert.equal(a.serverName, NAME);
  assert.equal(a.keyPem, b.keyPem, 'the service key is derived');
  const caA = new X509Certificate(a.caPem);
  const caB = new X509Certificate(b.caPem);
  assert.equal(caA.subject, 'CN=Portcullis derived CA');
  assert.equal(caA.subject, caB.subject);
  assert.ok(caA.publicKey.equals(caB.publicKey), 'the CA key is derived');
  assert.ok(caA.ca);
  assert.equal(caA.validFrom, 'Jan  1 00:00:00 2020 GMT');
  assert.equal(caA.validTo, 'Jan  1 00:00:00 2100 GMT');
  const leafB = new X509Certificate(b.certPem);
  assert.ok(!leafB.ca);
  assert.equal(leafB.subjectAltName, `DNS:${NAME}`);
  assert.equal(leafB.checkHost(NAME), NAME);
  assert.equal(leafB.checkHost('other.internal'), undefined);
  assert.deepEqual(leafB.keyUsage, ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
  assert.ok(createPublicKey(createPrivateKey(b.keyPem)).equals(leafB.publicKey), 'key and certificate match');
  // A CA from one derivation verifies a certificate from the other.
  assert.ok(leafB.checkIssued(caA));
  assert.ok(leafB.verify(caA.publicKey));
});

test('openssl verify (strict, as a TLS server and client) accepts the chain across derivations', async () => {
  const a = await deriveInternalTls(SECRET, NAME);
  const b = await deriveInternalTls(SECRET, NAME);
  const dir = mkdtempSync(join(tmpdir(), 'derived-tls-'));
  try {
    writeFileSync(join(dir, 'ca.pem'), a.caPem);
    writeFileSync(join(dir, 'leaf.pem'), b.certPem);
    for (const purpose of ['sslserver', 'sslclient']) {
      const out = execFileSync('openssl', [
        'verify',
        '-x509_strict',
        '-purpose',
        purpose,
        '-verify_hostname',
        NAME,
        '-CAfile',
        join(dir, 'ca.pem'),
        join(dir, 'leaf.pem'),
      ]).toString();
      assert.match(out, /: OK/);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('another secret derives another CA, which does not verify this one', async () => {
  const a = await deriveInternalTls(SECRET, NAME);
  const other = await deriveInternalTls(new Uint8Array(32).fill(12), NAME);
  const caOther = new X509Certificate(other.caPem);
  assert.ok(!caOther.publicKey.equals(new X509Certificate(a.caPem).publicKey));
  assert.equal(new X509Certificate(a.certPem).verify(caOther.publicKey), false);
});

test('an empty secret or a name that is not a lower-case DNS name is refused', async () => {
  await assert.rejects(deriveInternalTls(new Uint8Array(0), NAME), RangeError);
  for (const name of ['', 'Portcullis.Internal', '10.0.0.1', 'a b', '*.internal', 'a..b', '-a.b']) {
    await assert.rejects(deriveInternalTls(SECRET, name), RangeError, name);
  }
});

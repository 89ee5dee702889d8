// The self-signed fallback (fallback-tls.ts): one secret and host list give the same bytes on every
// call; the key depends on the secret alone, the serial on the hosts; the certificate verifies
// against itself, names exactly its hosts and, pinned by a client, passes a real TLS handshake
// (OpenSSL through node:tls) for a host it names and fails for one it does not.
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { connect, createServer } from 'node:tls';
import { test } from 'node:test';
import { fallbackCertificates } from '../../../src/pki/fallback-tls.js';

const SECRET = new Uint8Array(32).fill(3);
const HOSTS = ['*.wild.test', 'app.test'];

test('the same secret and hosts give the same bytes; other hosts another serial, the same key', () => {
  const a = fallbackCertificates(SECRET)(HOSTS);
  const b = fallbackCertificates(SECRET)(HOSTS);
  assert.deepEqual(a, b);
  const other = fallbackCertificates(SECRET)(['app.test']);
  assert.equal(other.keyPem, a.keyPem, 'the key depends on the secret alone');
  const certA = new X509Certificate(a.certPem);
  const certOther = new X509Certificate(other.certPem);
  assert.notEqual(certOther.serialNumber, certA.serialNumber, 'no two certificates share issuer and serial');
  const another = fallbackCertificates(new Uint8Array(32).fill(4))(HOSTS);
  assert.notEqual(another.keyPem, a.keyPem, 'another secret, another key');
  assert.throws(() => fallbackCertificates(new Uint8Array(0)), RangeError);
});

test('the certificate is self-signed for its hosts, with its key', () => {
  const { certPem, keyPem } = fallbackCertificates(SECRET)(HOSTS);
  const cert = new X509Certificate(certPem);
  assert.equal(cert.subject, cert.issuer);
  assert.ok(cert.verify(cert.publicKey));
  assert.equal(cert.subjectAltName, 'DNS:*.wild.test, DNS:app.test');
  assert.equal(cert.checkHost('x.wild.test'), '*.wild.test');
  assert.equal(cert.checkHost('other.test'), undefined);
  assert.ok(!cert.ca);
  assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1']);
  assert.ok(createPublicKey(createPrivateKey(keyPem)).equals(cert.publicKey));
});

test('a client that pins it completes a TLS handshake for a named host, and refuses another name', async () => {
  const { certPem, keyPem } = fallbackCertificates(SECRET)(HOSTS);
  const server = createServer({ cert: certPem, key: keyPem }, (socket) => socket.end());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const handshake = (servername: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, servername, ca: certPem }, () => {
        socket.destroy();
        resolve();
      });
      socket.on('error', reject);
    });
  try {
    await handshake('app.test');
    await handshake('x.wild.test');
    await assert.rejects(handshake('other.test'), /ERR_TLS_CERT_ALTNAME_INVALID|does not match/);
  } finally {
    server.close();
  }
});

// The edge's TLS through the real Envoy (issue 26, item 1): a name outside every configured
// certificate gets the self-signed fallback (which names it), as do an unknown name and a client
// that sends no SNI; the SNI of a configured certificate gets that certificate; the
// http_redirect_addr listener answers 301 to HTTPS with path and query kept; and a certificate
// file replaced on disk is served without a restart, the fallback staying byte for byte the same.
import assert from 'node:assert/strict';
import type { X509Certificate } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { after, before, test } from 'node:test';
import {
  churnDir,
  fingerprintOf,
  servedFingerprint,
  startChurnPortcullis,
  twoCertificates,
  type ChurnPortcullis,
} from '../support/churn-portcullis.js';
import { freePort } from '../support/ports.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstreams.js';
import { waitFor } from '../support/wait.js';

const FALLBACK_SUBJECT = 'CN=Portcullis self-signed fallback';

let dir: ReturnType<typeof churnDir>;
let upstream: EchoUpstream;
let portcullis: ChurnPortcullis;
let redirectPort: number;
let certFile: string;
let certPems: readonly [string, string];

before(async () => {
  dir = churnDir();
  const certificates = twoCertificates(dir.path); // *.churn.test, one key
  certPems = certificates.certPems;
  certFile = join(dir.path, 'tls.crt');
  writeFileSync(certFile, certPems[0]);
  upstream = await startEchoUpstream({ id: 'edge' });
  redirectPort = await freePort();
  const publicRoute = (from: string): Record<string, unknown> => ({
    from,
    to: upstream.url,
    allow_public_unauthenticated_access: true,
  });
  portcullis = await startChurnPortcullis(
    [publicRoute('https://app.churn.test'), publicRoute('https://plain.test')],
    {
      adsApiType: 'DELTA_GRPC',
      dir: dir.path,
      settings: {
        insecure_server: false,
        certificate_file: certFile,
        certificate_key_file: certificates.keyFile,
        http_redirect_addr: `127.0.0.1:${redirectPort}`,
      },
    },
  );
});

after(async () => {
  await portcullis?.stop();
  await upstream?.stop();
  dir?.rm();
});

/** The certificate a fresh TLS connection to the listener is shown, with `servername` as SNI (none: no SNI). */
function servedCertificate(servername: string | undefined): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = connect(
      {
        host: '127.0.0.1',
        port: portcullis.proxyPort,
        rejectUnauthorized: false,
        ...(servername === undefined ? {} : { servername }),
      },
      () => {
        const cert = socket.getPeerX509Certificate();
        socket.destroy();
        if (cert === undefined) reject(new Error('no peer certificate'));
        else resolve(cert);
      },
    );
    socket.setTimeout(5000, () => socket.destroy(new Error('TLS handshake timed out')));
    socket.on('error', reject);
  });
}

test('a name outside every certificate gets the self-signed fallback, which names it', async () => {
  const cert = await servedCertificate('plain.test');
  assert.equal(cert.subject, FALLBACK_SUBJECT);
  assert.equal(cert.issuer, FALLBACK_SUBJECT);
  assert.ok(cert.verify(cert.publicKey), 'self-signed');
  // authenticate.example.com (the sign-in host) is covered by no certificate either.
  assert.equal(cert.subjectAltName, 'DNS:authenticate.example.com, DNS:plain.test');
  const unknown = await servedCertificate('nobody.example');
  assert.equal(unknown.fingerprint256, cert.fingerprint256, 'any other name gets it too');
  const noSni = await servedCertificate(undefined);
  assert.equal(noSni.fingerprint256, cert.fingerprint256, 'and a client without SNI');
  // Pinning the fallback, a client reaches the route through it.
  const status = await new Promise<number>((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port: portcullis.proxyPort,
        path: '/',
        headers: { host: 'plain.test' },
        servername: 'plain.test',
        ca: cert.toString(),
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.setTimeout(5000, () => req.destroy(new Error('GET plain.test timed out')));
    req.on('error', reject);
    req.end();
  });
  assert.equal(status, 200);
});

test('the SNI of a configured certificate gets that certificate', async () => {
  assert.equal(await servedFingerprint(portcullis.proxyPort, 'app.churn.test'), fingerprintOf(certPems[0]));
});

test('the redirect listener answers 301 to the same URL over HTTPS, path and query kept', async () => {
  const answer = await new Promise<{ status: number; location: string | undefined }>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: redirectPort,
        path: '/a/b%20c?x=1&y=two',
        headers: { host: `app.churn.test:${redirectPort}` },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location }));
      },
    );
    req.setTimeout(5000, () => req.destroy(new Error('GET on the redirect listener timed out')));
    req.on('error', reject);
    req.end();
  });
  assert.deepEqual(answer, {
    status: 301,
    location: `https://app.churn.test:${portcullis.proxyPort}/a/b%20c?x=1&y=two`,
  });
});

test('a replaced certificate file is served without a restart; the fallback stays the same', async () => {
  const fallbackBefore = (await servedCertificate('plain.test')).fingerprint256;
  const counts = portcullis.reloadCounts();
  const temp = `${certFile}.tmp`;
  writeFileSync(temp, certPems[1]);
  renameSync(temp, certFile);
  await portcullis.waitLive(counts, 'the replaced certificate');
  await waitFor(
    async () =>
      (await servedFingerprint(portcullis.proxyPort, 'app.churn.test')) === fingerprintOf(certPems[1]),
    { what: 'Envoy to serve the replaced certificate', timeoutMs: 15_000 },
  );
  assert.equal((await servedCertificate('plain.test')).fingerprint256, fallbackBefore);
});

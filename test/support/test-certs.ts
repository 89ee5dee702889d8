import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A self-signed certificate and key generated for one test run (never committed). */
export interface TestCertificate {
  readonly certPem: string;
  readonly keyPem: string;
  readonly certFile: string;
  readonly keyFile: string;
}

/** Generates a throwaway EC P-256 self-signed certificate for `commonName` with openssl. */
export function generateTestCertificate(commonName = 'portcullis.test'): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-cert-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '1',
      '-subj',
      `/CN=${commonName}`,
      '-addext',
      `subjectAltName=DNS:${commonName}`,
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return {
    certPem: readFileSync(certFile, 'utf8'),
    keyPem: readFileSync(keyFile, 'utf8'),
    certFile,
    keyFile,
  };
}

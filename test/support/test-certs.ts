import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A self-signed certificate and key generated for one test run (never committed). */
export interface TestCertificate {
  readonly certPem: string;
  readonly keyPem: string;
  readonly certFile: string;
  readonly keyFile: string;
}

/**
 * Generates a throwaway EC P-256 self-signed certificate for `commonName` with openssl, naming
 * `names` (default: the common name) as DNS subjectAltNames.
 */
export function generateTestCertificate(
  commonName = 'portcullis.test',
  names: readonly string[] = [commonName],
): TestCertificate {
  return selfSigned('portcullis-cert-', commonName, [
    `subjectAltName=${names.map((name) => `DNS:${name}`).join(',')}`,
  ]);
}

/** A throwaway CA (EC P-256, self-signed, `CA:TRUE`) for one test run, to issue certificates with. */
export function generateTestCa(commonName = 'Portcullis test CA'): TestCertificate {
  return selfSigned('portcullis-ca-', commonName, [
    'basicConstraints=critical,CA:TRUE',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
}

/** An EC P-256 self-signed certificate valid for a day, with the `-addext` extensions given. */
function selfSigned(prefix: string, commonName: string, extensions: readonly string[]): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), prefix));
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
      ...extensions.flatMap((extension) => ['-addext', extension]),
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

/** A server certificate for the DNS name `dnsName`, signed by `ca` (from generateTestCa). */
export function issueTestCertificate(ca: TestCertificate, dnsName: string): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-leaf-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  const requestFile = join(dir, 'request.pem');
  const extensionsFile = join(dir, 'extensions.cnf');
  writeFileSync(
    extensionsFile,
    `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:${dnsName}\n`,
  );
  const run = (args: string[]): void => {
    execFileSync('openssl', args, { stdio: 'ignore' });
  };
  run([
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-subj',
    `/CN=${dnsName}`,
    '-keyout',
    keyFile,
    '-out',
    requestFile,
  ]);
  run([
    'x509',
    '-req',
    '-in',
    requestFile,
    '-CA',
    ca.certFile,
    '-CAkey',
    ca.keyFile,
    '-set_serial',
    '1',
    '-days',
    '1',
    '-extfile',
    extensionsFile,
    '-out',
    certFile,
  ]);
  return {
    certPem: readFileSync(certFile, 'utf8'),
    keyPem: readFileSync(keyFile, 'utf8'),
    certFile,
    keyFile,
  };
}

/**
 * Checks the contents of PEM certificates and private keys with node:crypto (OpenSSL), so a
 * certificate or key Envoy could not load, or a key that is not its certificate's, is refused by
 * `validate` with its key instead of being NACKed by Envoy after a reload. Node and Envoy both
 * read PEM through an OpenSSL-family library; expiry is not checked (Envoy does not refuse it).
 */
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** The CERTIFICATE blocks of `pem`, in order (a leaf and its chain, or a CA bundle). */
function certificateBlocks(pem: string): string[] {
  return [...pem.matchAll(CERTIFICATE_BLOCK)].map((match) => match[0]);
}

/** The library's reason without OpenSSL's numeric prefix (`error:0680007B:asn1 ...::`). */
function reason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/^error:[0-9A-Fa-f]+:[^:]*:[^:]*:/, '').trim() || 'parse error';
}

/**
 * Why the certificates in `pem` cannot be used, or undefined when every CERTIFICATE block parses
 * as X.509 (and there is at least one). Names the block (`certificate 2 of 3`) when there are several.
 */
export function certificateProblem(pem: string): string | undefined {
  const blocks = certificateBlocks(pem);
  if (blocks.length === 0) return 'does not hold a PEM certificate (-----BEGIN CERTIFICATE-----)';
  for (const [index, block] of blocks.entries()) {
    try {
      new X509Certificate(block);
    } catch (err) {
      const which = blocks.length === 1 ? 'its certificate' : `certificate ${index + 1} of ${blocks.length}`;
      return `${which} does not parse as X.509 (${reason(err)}); Envoy would refuse it`;
    }
  }
  return undefined;
}

/** The private key in `pem`, or why it cannot be used (Envoy is given no passphrase). */
export function readPrivateKey(pem: string): KeyObject | string {
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(pem))
    return 'is an encrypted private key; give it unencrypted';
  try {
    return createPrivateKey(pem);
  } catch (err) {
    return `does not parse as a private key (${reason(err)}); Envoy would refuse it`;
  }
}

/**
 * Why `keyPem` is not the private key of the first (leaf) certificate in `certPem`, or undefined
 * when it is. Both are assumed to parse already (see certificateProblem and readPrivateKey); if
 * either does not, that problem was reported and this says nothing more.
 */
export function pairProblem(certPem: string, keyPem: string, certName: string): string | undefined {
  const leaf = certificateBlocks(certPem)[0];
  const key = readPrivateKey(keyPem);
  if (leaf === undefined || typeof key === 'string') return undefined;
  let matches: boolean;
  try {
    matches = new X509Certificate(leaf).checkPrivateKey(key);
  } catch {
    matches = false; // a key of another type than the certificate's
  }
  if (matches) return undefined;
  return `is not the private key of the certificate in ${certName}; Envoy would refuse the pair`;
}

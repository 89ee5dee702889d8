/**
 * The self-signed certificate the user-facing listener serves for a name no configured certificate
 * covers (the spec's section 7, since 0.16.0): Envoy serves the first certificate of the listener
 * when none matches the client's SNI, and translate puts this one first (translate/edge-tls.ts).
 *
 * Deterministic, so a restart or an unchanged reload compiles the same listener bytes and Envoy
 * drains nothing: the key comes from `shared_secret` through HKDF, and the certificate from the
 * names it covers (x509-build.ts: fixed validity, RFC 6979 signatures). Knowing `shared_secret`
 * already lets one sign internal tokens, so a key derived from it protects nothing new; and a
 * self-signed certificate is trusted by nobody unless an operator pins it.
 */
import { createHash } from 'node:crypto';
import * as pkijs from 'pkijs';
import {
  KEY_USAGE,
  OID,
  deriveP256Key,
  dnsAltNames,
  extension,
  issueCertificate,
  keyUsageExtension,
} from './x509-build.js';

/** A certificate with its key, both PEM. */
export interface CertificatePair {
  readonly certPem: string;
  readonly keyPem: string;
}

/**
 * Makes the self-signed fallback certificate for `hosts` (sorted, deduplicated DNS names, possibly
 * `*.` wildcards; possibly none). Synchronous and deterministic: the same hosts give the same
 * bytes, so an unchanged reload compiles the same listener. Translate takes it from
 * `fallbackCertificates` below, made from the secret by whoever builds the keys.
 */
export type FallbackCertificate = (hosts: readonly string[]) => CertificatePair;

/** Subject and issuer; also the only name Envoy sees in it when it covers no host. */
const FALLBACK_NAME = 'Portcullis self-signed fallback';

/**
 * The fallback generator for `sharedSecret` (the decoded `shared_secret`), as translate takes it:
 * `hosts` (sorted DNS names, `*.` wildcards allowed) -> a self-signed P-256 certificate naming
 * them as DNS SANs, and its key. The key depends only on the secret; the certificate only on the
 * secret and `hosts` (its serial is a hash of them, so two different certificates never share
 * issuer and serial, which browsers refuse). Synchronous, so translate stays synchronous.
 * Throws a RangeError on an empty secret.
 */
export function fallbackCertificates(sharedSecret: Uint8Array): FallbackCertificate {
  if (sharedSecret.length === 0) throw new RangeError('shared secret is empty');
  return (hosts: readonly string[]): CertificatePair => {
    const key = deriveP256Key(sharedSecret, 'fallback-tls');
    const digest = createHash('sha256').update(JSON.stringify(hosts)).digest();
    const certPem = issueCertificate({
      // 48 bits of the hash: a positive safe integer; never 0 (RFC 5280 4.1.2.2).
      serial: digest.readUIntBE(0, 6) + 1,
      subject: FALLBACK_NAME,
      issuerName: FALLBACK_NAME,
      key,
      issuer: key,
      extensions: [
        extension(OID.basicConstraints, true, new pkijs.BasicConstraints({ cA: false })),
        keyUsageExtension(KEY_USAGE.digitalSignature),
        extension(OID.extKeyUsage, false, new pkijs.ExtKeyUsage({ keyPurposes: [OID.serverAuth] })),
        ...(hosts.length === 0 ? [] : [dnsAltNames(hosts)]),
      ],
    });
    return { certPem, keyPem: key.pkcs8Pem };
  };
}

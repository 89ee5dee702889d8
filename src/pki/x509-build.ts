/**
 * Deterministic X.509 for the certificates Portcullis makes itself (the `tls_derive` CA and service
 * certificate, the self-signed fallback of the user-facing listener): P-256 keys derived from a
 * secret with HKDF, certificates built with pkijs (X.509 and ASN.1 through a library, never by
 * hand) and signed with deterministic ECDSA-SHA256 (RFC 6979, @noble/curves). The same secret,
 * label and contents always give the same bytes, so a restart or an unchanged reload compiles the
 * same resources. Synchronous: the public key's SPKI comes from node:crypto, so no WebCrypto (and
 * no promise) is needed, and translate can call a generator built on it.
 */
import { X509Certificate, createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import { p256 } from '@noble/curves/nist.js';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { deriveP256 } from '../shared/key-schedule.js';

/** The key-schedule purposes whose keys are P-256 certificate keys. */
export type P256Purpose = Parameters<typeof deriveP256>[1];

/** Fixed, so a certificate does not depend on when it was made. */
const NOT_BEFORE = new Date(Date.UTC(2020, 0, 1));
const NOT_AFTER = new Date(Date.UTC(2100, 0, 1));

/** ecdsa-with-SHA256 (RFC 5758 3.2): parameters absent. */
const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';

/** Object identifiers the certificates use. */
export const OID = {
  commonName: '2.5.4.3',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

/** KeyUsage bits (RFC 5280 4.2.1.3) as the first byte of the BIT STRING. */
export const KEY_USAGE = { digitalSignature: 0x80, keyCertSign: 0x04, cRLSign: 0x02 } as const;

/** A derived P-256 key pair, in the forms the certificate builder and TLS need. */
export interface DerivedKey {
  /** The private scalar, 32 bytes big-endian. */
  readonly d: Uint8Array;
  /** SubjectPublicKeyInfo, DER. */
  readonly spkiDer: Uint8Array;
  readonly pkcs8Pem: string;
  /** RFC 5280 4.2.1.2 method 1: SHA-1 of the public key's bits (the uncompressed point). */
  readonly keyId: ArrayBuffer;
}

/**
 * The P-256 key pair of `purpose` from the key schedule (shared/key-schedule.ts), with the SPKI
 * and PKCS#8 from node:crypto's key export. Same secret and purpose, same key.
 */
export function deriveP256Key(secret: Uint8Array, purpose: P256Purpose): DerivedKey {
  const { d, point } = deriveP256(secret, purpose);
  const publicJwk = {
    kty: 'EC',
    crv: 'P-256',
    x: point.subarray(1, 33).toString('base64url'),
    y: point.subarray(33, 65).toString('base64url'),
  };
  const privateJwk = { ...publicJwk, d: d.toString('base64url') };
  return {
    d: new Uint8Array(d),
    spkiDer: new Uint8Array(
      createPublicKey({ key: publicJwk, format: 'jwk' }).export({ type: 'spki', format: 'der' }),
    ),
    keyId: new Uint8Array(createHash('sha1').update(point).digest()).buffer,
    pkcs8Pem: createPrivateKey({ key: privateJwk, format: 'jwk' }).export({
      type: 'pkcs8',
      format: 'pem',
    }) as string,
  };
}

/** What one certificate says and who signs it. */
export interface CertificateSpec {
  readonly serial: number;
  /** Subject common name. */
  readonly subject: string;
  /** Issuer common name (the subject's own for a self-signed certificate). */
  readonly issuerName: string;
  /** The subject's key. */
  readonly key: DerivedKey;
  /** The issuer's key (the subject's own for a self-signed certificate). */
  readonly issuer: DerivedKey;
  readonly extensions: readonly pkijs.Extension[];
}

/**
 * An X.509 v3 certificate as PEM: valid 2020-2100, the given extensions plus subject and
 * authority key identifiers (OpenSSL's strict mode requires them), signed by `spec.issuer` with
 * deterministic ECDSA-SHA256, so the bytes depend only on the spec.
 */
export function issueCertificate(spec: CertificateSpec): string {
  const cert = new pkijs.Certificate();
  cert.version = 2;
  cert.serialNumber = new asn1js.Integer({ value: spec.serial });
  cert.issuer.typesAndValues.push(commonName(spec.issuerName));
  cert.subject.typesAndValues.push(commonName(spec.subject));
  cert.notBefore = new pkijs.Time({ type: pkijs.TimeType.UTCTime, value: NOT_BEFORE });
  // RFC 5280 4.1.2.5: dates from 2050 on are GeneralizedTime.
  cert.notAfter = new pkijs.Time({ type: pkijs.TimeType.GeneralizedTime, value: NOT_AFTER });
  const authorityKeyId = new pkijs.AuthorityKeyIdentifier({
    keyIdentifier: new asn1js.OctetString({ valueHex: spec.issuer.keyId }),
  });
  cert.extensions = [
    ...spec.extensions,
    extension(OID.subjectKeyIdentifier, false, new asn1js.OctetString({ valueHex: spec.key.keyId })),
    extension(OID.authorityKeyIdentifier, false, authorityKeyId),
  ];
  cert.subjectPublicKeyInfo = pkijs.PublicKeyInfo.fromBER(spec.key.spkiDer);
  cert.signature = new pkijs.AlgorithmIdentifier({ algorithmId: ECDSA_WITH_SHA256 });
  cert.signatureAlgorithm = new pkijs.AlgorithmIdentifier({ algorithmId: ECDSA_WITH_SHA256 });
  // RFC 6979 nonces: the signature, and so the certificate, depends only on the keys and contents.
  const tbs = new Uint8Array(cert.encodeTBS().toBER(false));
  const signature = p256.sign(tbs, spec.issuer.d, { format: 'der' });
  cert.signatureValue = new asn1js.BitString({ valueHex: new Uint8Array(signature).buffer });
  return new X509Certificate(Buffer.from(cert.toSchema(true).toBER(false))).toString();
}

/** An extension whose value is `value` (a pkijs structure or an asn1js value), DER-encoded. */
export function extension(
  extnID: string,
  critical: boolean,
  value: { toSchema(): asn1js.AsnType } | asn1js.AsnType,
): pkijs.Extension {
  const asn = 'toSchema' in value ? value.toSchema() : value;
  return new pkijs.Extension({ extnID, critical, extnValue: asn.toBER(false) });
}

/** The critical KeyUsage extension with the bits in `firstByte` (DER: trailing zero bits unused). */
export function keyUsageExtension(firstByte: number): pkijs.Extension {
  const unusedBits = Math.min(7, Math.log2(firstByte & -firstByte));
  const bits = new asn1js.BitString({ valueHex: new Uint8Array([firstByte]).buffer, unusedBits });
  return new pkijs.Extension({ extnID: OID.keyUsage, critical: true, extnValue: bits.toBER(false) });
}

/** The SubjectAltName extension naming `dnsNames` (GeneralName dNSName each). */
export function dnsAltNames(dnsNames: readonly string[]): pkijs.Extension {
  const altNames = dnsNames.map((value) => new pkijs.GeneralName({ type: 2, value }));
  return extension(OID.subjectAltName, false, new pkijs.AltName({ altNames }));
}

function commonName(value: string): pkijs.AttributeTypeAndValue {
  return new pkijs.AttributeTypeAndValue({ type: OID.commonName, value: new asn1js.Utf8String({ value }) });
}

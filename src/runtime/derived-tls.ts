/**
 * `tls_derive`: TLS for internal gRPC without certificates to distribute. Every instance derives
 * the same CA key and subject from `shared_secret`, and a service certificate for the configured
 * DNS name signed by it, so every instance trusts every other one, whatever address it dials: the
 * client verifies the peer's chain against the derived CA and the name `tls_derive` (not the
 * dialled host). Knowing `shared_secret` is already enough to impersonate a service (it signs
 * internal tokens), so deriving the keys from it adds no new secret to protect.
 *
 * The certificates are built with pkijs (X.509 and ASN.1 through a library, never by hand) and
 * signed with deterministic ECDSA-SHA256 (RFC 6979, @noble/curves), so every derivation from one
 * secret and name gives the very same certificate bytes: a restarted instance compiles the same
 * ext_authz and HTTP clusters (their inline CA included), and an Envoy that kept running sees no
 * change on reconnect. TLS stacks (OpenSSL in Node, BoringSSL in Envoy) verify them like any other
 * (test/integration/internal-tls.test.ts).
 */
import { X509Certificate, createECDH, createHash, createPrivateKey, hkdfSync, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import { p256 } from '@noble/curves/nist.js';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

/** The derived CA and this instance's service certificate, PEM, and the name every peer checks. */
export interface DerivedTls {
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
  readonly serverName: string;
}

const CA_LABEL = 'portcullis tls_derive ca v1';
const SERVICE_LABEL = 'portcullis tls_derive service v1';
const CA_NAME = 'Portcullis derived CA';
const SERVICE_NAME = 'Portcullis internal service';
/** Fixed, so a certificate does not depend on when it was derived. */
const NOT_BEFORE = new Date(Date.UTC(2020, 0, 1));
const NOT_AFTER = new Date(Date.UTC(2100, 0, 1));

/** P-256 group order n: a private scalar lies in [1, n-1]. */
const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

const OID = {
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
const KEY_USAGE = { digitalSignature: 0x80, keyCertSign: 0x04, cRLSign: 0x02 } as const;

/** pkijs's WebCrypto types (the DOM's), which Node's WebCrypto objects implement. */
type PkiCrypto = ConstructorParameters<typeof pkijs.CryptoEngine>[0]['crypto'];
type PkiKey = Parameters<pkijs.Certificate['sign']>[0];

interface DerivedKey {
  /** The private scalar, 32 bytes big-endian. */
  readonly d: Uint8Array;
  readonly publicKey: webcrypto.CryptoKey;
  readonly pkcs8Pem: string;
  /** RFC 5280 4.2.1.2 method 1: SHA-1 of the public key's bits (the uncompressed point). */
  readonly keyId: ArrayBuffer;
}

/** A DNS name as `tls_derive` takes it: lower-case labels of letters, digits and hyphens. */
const DNS_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * The CA and service certificate for `sharedSecret` (the decoded `shared_secret`) and
 * `serverName` (the `tls_derive` DNS name). Every call with the same arguments gives the same bytes
 * (keys, certificates and PEM), on every instance. Throws a
 * RangeError on an empty secret or a server name that is not a lower-case DNS name (an IP
 * address is not one: it would give no SNI).
 */
export async function deriveInternalTls(sharedSecret: Uint8Array, serverName: string): Promise<DerivedTls> {
  if (sharedSecret.length === 0) throw new RangeError('shared secret is empty');
  if (!DNS_NAME.test(serverName) || isIP(serverName) !== 0) {
    throw new RangeError(`tls_derive ${serverName} is not a lower-case DNS name`);
  }
  const engine = new pkijs.CryptoEngine({ name: 'node', crypto: webcrypto as unknown as PkiCrypto });
  const ca = await derivedKey(sharedSecret, CA_LABEL);
  const service = await derivedKey(sharedSecret, SERVICE_LABEL);
  const caPem = await certificate(engine, {
    serial: 1,
    subject: CA_NAME,
    key: ca,
    issuer: ca,
    extensions: [
      extension(OID.basicConstraints, true, new pkijs.BasicConstraints({ cA: true, pathLenConstraint: 0 })),
      keyUsageExtension(KEY_USAGE.keyCertSign | KEY_USAGE.cRLSign),
    ],
  });
  const certPem = await certificate(engine, {
    serial: 2,
    subject: SERVICE_NAME,
    key: service,
    issuer: ca,
    extensions: [
      extension(OID.basicConstraints, true, new pkijs.BasicConstraints({ cA: false })),
      keyUsageExtension(KEY_USAGE.digitalSignature),
      extension(
        OID.extKeyUsage,
        false,
        new pkijs.ExtKeyUsage({ keyPurposes: [OID.serverAuth, OID.clientAuth] }),
      ),
      extension(
        OID.subjectAltName,
        false,
        new pkijs.AltName({ altNames: [new pkijs.GeneralName({ type: 2, value: serverName })] }),
      ),
    ],
  });
  return { caPem, certPem, keyPem: service.pkcs8Pem, serverName };
}

/**
 * A P-256 key pair from HKDF-SHA256(secret, label): 48 bytes reduced into [1, n-1] (FIPS 186-4
 * B.4.1: the 128 extra bits make the bias negligible), the public point from node:crypto's ECDH,
 * both imported into WebCrypto as JWKs for pkijs, and the private key as PKCS#8 PEM for TLS.
 */
async function derivedKey(secret: Uint8Array, label: string): Promise<DerivedKey> {
  const okm = Buffer.from(hkdfSync('sha256', secret, new Uint8Array(0), label, 48));
  const scalar = (BigInt(`0x${okm.toString('hex')}`) % (P256_ORDER - 1n)) + 1n;
  const d = Buffer.from(scalar.toString(16).padStart(64, '0'), 'hex');
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(d);
  const point = ecdh.getPublicKey();
  const publicJwk = {
    kty: 'EC',
    crv: 'P-256',
    x: point.subarray(1, 33).toString('base64url'),
    y: point.subarray(33, 65).toString('base64url'),
  };
  const privateJwk = { ...publicJwk, d: d.toString('base64url') };
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256' };
  return {
    d: new Uint8Array(d),
    publicKey: await webcrypto.subtle.importKey('jwk', publicJwk, algorithm, true, ['verify']),
    keyId: new Uint8Array(createHash('sha1').update(point).digest()).buffer,
    pkcs8Pem: createPrivateKey({ key: privateJwk, format: 'jwk' }).export({
      type: 'pkcs8',
      format: 'pem',
    }) as string,
  };
}

interface CertificateSpec {
  readonly serial: number;
  readonly subject: string;
  /** The subject's key. */
  readonly key: DerivedKey;
  /** The CA's key: every certificate here is issued by the derived CA (itself included). */
  readonly issuer: DerivedKey;
  readonly extensions: pkijs.Extension[];
}

/** ecdsa-with-SHA256 (RFC 5758 3.2): parameters absent. */
const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';

/** An X.509 v3 certificate issued by the derived CA, deterministic ECDSA-SHA256, as PEM. */
async function certificate(engine: pkijs.CryptoEngine, spec: CertificateSpec): Promise<string> {
  const cert = new pkijs.Certificate();
  cert.version = 2;
  cert.serialNumber = new asn1js.Integer({ value: spec.serial });
  cert.issuer.typesAndValues.push(commonName(CA_NAME));
  cert.subject.typesAndValues.push(commonName(spec.subject));
  cert.notBefore = new pkijs.Time({ type: pkijs.TimeType.UTCTime, value: NOT_BEFORE });
  // RFC 5280 4.1.2.5: dates from 2050 on are GeneralizedTime.
  cert.notAfter = new pkijs.Time({ type: pkijs.TimeType.GeneralizedTime, value: NOT_AFTER });
  // Key identifiers: OpenSSL's strict mode (X509_V_FLAG_X509_STRICT) requires them.
  const authorityKeyId = new pkijs.AuthorityKeyIdentifier({
    keyIdentifier: new asn1js.OctetString({ valueHex: spec.issuer.keyId }),
  });
  cert.extensions = [
    ...spec.extensions,
    extension(OID.subjectKeyIdentifier, false, new asn1js.OctetString({ valueHex: spec.key.keyId })),
    extension(OID.authorityKeyIdentifier, false, authorityKeyId),
  ];
  await cert.subjectPublicKeyInfo.importKey(spec.key.publicKey as PkiKey, engine);
  cert.signature = new pkijs.AlgorithmIdentifier({ algorithmId: ECDSA_WITH_SHA256 });
  cert.signatureAlgorithm = new pkijs.AlgorithmIdentifier({ algorithmId: ECDSA_WITH_SHA256 });
  // RFC 6979 nonces: the signature, and so the certificate, depends only on the keys and contents.
  const tbs = new Uint8Array(cert.encodeTBS().toBER(false));
  const signature = p256.sign(tbs, spec.issuer.d, { format: 'der' });
  cert.signatureValue = new asn1js.BitString({ valueHex: new Uint8Array(signature).buffer });
  return new X509Certificate(Buffer.from(cert.toSchema(true).toBER(false))).toString();
}

function commonName(value: string): pkijs.AttributeTypeAndValue {
  return new pkijs.AttributeTypeAndValue({ type: OID.commonName, value: new asn1js.Utf8String({ value }) });
}

/** An extension whose value is `value` (a pkijs structure or an asn1js value), DER-encoded. */
function extension(
  extnID: string,
  critical: boolean,
  value: { toSchema(): asn1js.AsnType } | asn1js.AsnType,
): pkijs.Extension {
  const asn = 'toSchema' in value ? value.toSchema() : value;
  return new pkijs.Extension({ extnID, critical, extnValue: asn.toBER(false) });
}

/** The critical KeyUsage extension with the bits in `firstByte` (DER: trailing zero bits unused). */
function keyUsageExtension(firstByte: number): pkijs.Extension {
  const unusedBits = Math.min(7, Math.log2(firstByte & -firstByte));
  const bits = new asn1js.BitString({ valueHex: new Uint8Array([firstByte]).buffer, unusedBits });
  return new pkijs.Extension({ extnID: OID.keyUsage, critical: true, extnValue: bits.toBER(false) });
}

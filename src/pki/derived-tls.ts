/**
 * `tls_derive`: TLS for internal gRPC without certificates to distribute. Every instance derives
 * the same CA key and subject from `shared_secret`, and a service certificate for the configured
 * DNS name signed by it, so every instance trusts every other one, whatever address it dials: the
 * client verifies the peer's chain against the derived CA and the name `tls_derive` (not the
 * dialled host). Knowing `shared_secret` is already enough to impersonate a service (it signs
 * internal tokens), so deriving the keys from it adds no new secret to protect.
 *
 * The certificates are built by x509-build.ts (pkijs, deterministic ECDSA-SHA256), so every derivation from one
 * secret and name gives the very same certificate bytes: a restarted instance compiles the same
 * ext_authz and HTTP clusters (their inline CA included), and an Envoy that kept running sees no
 * change on reconnect. TLS stacks (OpenSSL in Node, BoringSSL in Envoy) verify them like any other
 * (test/integration/internal-tls.test.ts).
 */
import { isIP } from 'node:net';
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

/** The derived CA and this instance's service certificate, PEM, and the name every peer checks. */
export interface DerivedTls {
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
  readonly serverName: string;
}

const CA_NAME = 'Portcullis derived CA';
const SERVICE_NAME = 'Portcullis internal service';

/** A DNS name as `tls_derive` takes it: lower-case labels of letters, digits and hyphens. */
const DNS_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * The CA and service certificate for `sharedSecret` (the decoded `shared_secret`) and
 * `serverName` (the `tls_derive` DNS name). Every call with the same arguments gives the same bytes
 * (keys, certificates and PEM), on every instance. Throws a
 * RangeError on an empty secret or a server name that is not a lower-case DNS name (an IP
 * address is not one: it would give no SNI).
 */
export function deriveInternalTls(sharedSecret: Uint8Array, serverName: string): Promise<DerivedTls> {
  return Promise.resolve().then(() => deriveInternalTlsSync(sharedSecret, serverName));
}

/** `deriveInternalTls`, synchronously: the key ring builds it inside one synchronous build pass. */
export function deriveInternalTlsSync(sharedSecret: Uint8Array, serverName: string): DerivedTls {
  if (sharedSecret.length === 0) throw new RangeError('shared secret is empty');
  if (!DNS_NAME.test(serverName) || isIP(serverName) !== 0) {
    throw new RangeError(`tls_derive ${serverName} is not a lower-case DNS name`);
  }
  const ca = deriveP256Key(sharedSecret, 'tls-derive-ca');
  const service = deriveP256Key(sharedSecret, 'tls-derive-service');
  const caPem = issueCertificate({
    serial: 1,
    subject: CA_NAME,
    issuerName: CA_NAME,
    key: ca,
    issuer: ca,
    extensions: [
      extension(OID.basicConstraints, true, new pkijs.BasicConstraints({ cA: true, pathLenConstraint: 0 })),
      keyUsageExtension(KEY_USAGE.keyCertSign | KEY_USAGE.cRLSign),
    ],
  });
  const certPem = issueCertificate({
    serial: 2,
    subject: SERVICE_NAME,
    issuerName: CA_NAME,
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
      dnsAltNames([serverName]),
    ],
  });
  return { caPem, certPem, keyPem: service.pkcs8Pem, serverName };
}

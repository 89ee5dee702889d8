/**
 * TLS Secrets referenced by an Ingress's `spec.tls` or a Gateway listener's certificateRefs ->
 * listener certificate entries (`{cert, key}` PEM, as the `certificates` option takes them). Only
 * referenced Secrets are read (through the same injected ReadSecret as the settings resource),
 * and their contents never appear in a problem. certificateNames says which hosts a certificate
 * answers for, so host ownership (host-ownership.ts) can leave out one naming another namespace's.
 */
import { X509Certificate } from 'node:crypto';
import * as pkijs from 'pkijs';
import type { ObjectProblem, ObjectRef } from './object-problems.js';
import type { ReadSecret } from './secret-refs.js';
import { TLS_CERT_KEY, TLS_KEY_KEY } from './spec-fields.js';
import type { CertificateOrigin } from './route-provenance.js';

/** Listener certificates with their origins (same index), each Secret once. */
export interface CertificateSet {
  readonly certificates: { readonly cert: string; readonly key: string }[];
  readonly origins: CertificateOrigin[];
  /** `namespace/name` of each Secret already taken. */
  readonly taken: Set<string>;
}

/** An empty CertificateSet for one build. */
export function newCertificateSet(): CertificateSet {
  return { certificates: [], origins: [], taken: new Set() };
}

/**
 * Adds the Secret `namespace/name` that `referrer` references at `where` to `set`, or returns the
 * problem: a missing Secret, or one whose `tls.crt` / `tls.key` is missing or not PEM (the data
 * keys of a `kubernetes.io/tls` Secret, read as the settings resource reads its certificates). A
 * value that is not PEM is refused here, since the `certificates` option would read anything else
 * as a file path on the controller.
 */
export function addTlsSecret(
  set: CertificateSet,
  readSecret: ReadSecret,
  reference: { readonly namespace: string; readonly name: string },
  referrer: ObjectRef,
  where: string,
): ObjectProblem | undefined {
  const id = `${reference.namespace}/${reference.name}`;
  if (set.taken.has(id)) return undefined;
  const problem = (message: string): ObjectProblem => ({ object: referrer, where, message });
  const data = readSecret(reference);
  if (data === undefined) return problem(`Secret ${id} does not exist`);
  const cert = pem(data[TLS_CERT_KEY]);
  const key = pem(data[TLS_KEY_KEY]);
  if (cert === undefined || key === undefined)
    return problem(`Secret ${id}: ${cert === undefined ? TLS_CERT_KEY : TLS_KEY_KEY} is missing or not PEM`);
  set.taken.add(id);
  set.certificates.push({ cert, key });
  set.origins.push({ object: referrer, where: `${where} (Secret ${id})` });
  return undefined;
}

/** The PEM text of a Secret data value (decoded bytes), or undefined if it holds none. */
function pem(bytes: Uint8Array | undefined): string | undefined {
  if (bytes === undefined) return undefined;
  const text = Buffer.from(bytes).toString('utf8');
  return text.includes('-----BEGIN ') ? text : undefined;
}

/** subjectAltName and commonName. */
const SAN_OID = '2.5.29.17';
const CN_OID = '2.5.4.3';

/**
 * The server names Envoy selects `certPem` by (its first certificate): the DNS SANs, or the subject
 * common name when it has none; lower-cased, as written (`*.example.com` stays a wildcard). Parsed
 * with pkijs as src/translate/edge-tls.ts does (kubernetes may not import translate); text that is
 * no certificate names nothing (parseConfig refuses it with its own message).
 */
export function certificateNames(certPem: string): readonly string[] {
  const known = NAMES_READ.get(certPem);
  if (known !== undefined) return known;
  const names = readNames(certPem);
  // Every build reads every certificate again (about 2 ms each): keep the last ones read.
  if (NAMES_READ.size >= NAMES_KEPT) NAMES_READ.clear();
  NAMES_READ.set(certPem, names);
  return names;
}

/** Certificate PEM -> its names, for the certificates of recent builds (certificateNames). */
const NAMES_READ = new Map<string, readonly string[]>();
const NAMES_KEPT = 4096;

function readNames(certPem: string): readonly string[] {
  let cert: pkijs.Certificate;
  try {
    cert = pkijs.Certificate.fromBER(new X509Certificate(certPem).raw);
  } catch {
    return [];
  }
  const san = cert.extensions?.find((ext) => ext.extnID === SAN_OID)?.parsedValue as
    | pkijs.AltName
    | undefined;
  const dns = (san?.altNames ?? [])
    .filter((name) => name.type === 2)
    .map((name) => String(name.value).toLowerCase());
  if (dns.length > 0) return dns;
  return cert.subject.typesAndValues
    .filter((attribute) => attribute.type === CN_OID)
    .map((attribute) => String(attribute.value.valueBlock.value).toLowerCase());
}

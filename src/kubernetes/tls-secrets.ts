/**
 * TLS Secrets referenced by an Ingress's `spec.tls` or a Gateway listener's certificateRefs ->
 * listener certificate entries (`{cert, key}` PEM, as the `certificates` option takes them). Only
 * referenced Secrets are read (through the same injected ReadSecret as the settings resource),
 * and their contents never appear in a problem. certificateNames says which hosts a certificate
 * answers for, so host ownership (host-ownership.ts) can leave out one naming another namespace's.
 */
import { certificateNames } from '../shared/certificate-names.js';
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

/** A certificate's server names (certificateNames), as the route source reads them. */
export type CertificateNamesOf = (certPem: string) => readonly string[];

/**
 * certificateNames, except that text holding no certificate names nothing (parseConfig refuses it
 * with its own message).
 */
export function readCertificateNames(certPem: string): readonly string[] {
  try {
    return certificateNames(certPem);
  } catch {
    return [];
  }
}

/**
 * A readCertificateNames that remembers the names of the last `kept` certificates it read: every
 * build reads every certificate again (about 2 ms each), and the watcher that makes builds owns
 * one of these for its lifetime.
 */
export function rememberingCertificateNames(kept = 4096): CertificateNamesOf {
  const read = new Map<string, readonly string[]>();
  return (certPem) => {
    const known = read.get(certPem);
    if (known !== undefined) return known;
    const names = readCertificateNames(certPem);
    if (read.size >= kept) read.clear();
    read.set(certPem, names);
    return names;
  };
}

/**
 * TLS Secrets referenced by an Ingress's `spec.tls` or a Gateway listener's certificateRefs ->
 * listener certificate entries (`{cert, key}` PEM, as the `certificates` option takes them). Only
 * referenced Secrets are read (through the lookup), and their contents never appear in a problem.
 */
import { TLS_SECRET_TYPE, type SecretLookup } from './objects.js';
import type { ObjectProblem, ObjectRef } from './object-problems.js';
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
 * problem: a missing Secret, one of another type, or one whose `tls.crt` / `tls.key` is not PEM.
 * A value that is not PEM is refused here, since the `certificates` option would read anything
 * else as a file path on the controller.
 */
export function addTlsSecret(
  set: CertificateSet,
  lookup: SecretLookup,
  reference: { readonly namespace: string; readonly name: string },
  referrer: ObjectRef,
  where: string,
): ObjectProblem | undefined {
  const id = `${reference.namespace}/${reference.name}`;
  if (set.taken.has(id)) return undefined;
  const problem = (message: string): ObjectProblem => ({ object: referrer, where, message });
  const secret = lookup(reference.namespace, reference.name);
  if (secret === undefined) return problem(`Secret ${id} does not exist`);
  if (secret.type !== TLS_SECRET_TYPE)
    return problem(
      `Secret ${id} is of type ${secret.type ?? 'Opaque'}; a certificate needs type ${TLS_SECRET_TYPE}`,
    );
  const cert = pem(secret.data?.['tls.crt']);
  const key = pem(secret.data?.['tls.key']);
  if (cert === undefined || key === undefined)
    return problem(
      `Secret ${id}: ${cert === undefined ? 'tls.crt' : 'tls.key'} is missing or not PEM (base64 of a PEM block in the Secret's data)`,
    );
  set.taken.add(id);
  set.certificates.push({ cert, key });
  set.origins.push({ object: referrer, where: `${where} (Secret ${id})` });
  return undefined;
}

/** The PEM text of a Secret data value (base64, as the API returns it), or undefined if it holds none. */
function pem(base64: string | undefined): string | undefined {
  if (base64 === undefined) return undefined;
  const text = Buffer.from(base64, 'base64').toString('utf8');
  return text.includes('-----BEGIN ') ? text : undefined;
}

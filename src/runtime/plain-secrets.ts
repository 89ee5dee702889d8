import type { KeySecrets } from '../keys/key-ring.js';
import { Secret } from '../shared/secret.js';

/**
 * A key ring's secrets as plain data, the form in which they cross from the build worker to the
 * main thread: `Secret` keeps its value in a private field, which a structured clone drops, and
 * the derived keys are class instances (KeyObjects, SessionHandles) that do not survive one either.
 * The main thread wraps the values again (`keySecretsOf`) and builds the ring itself
 * (`buildKeyRing`, deterministic), so both threads hold the same keys.
 */
export interface PlainSecrets {
  readonly sharedSecret: Uint8Array;
  readonly cookieSecret: Uint8Array;
  readonly generated: KeySecrets['generated'];
  readonly signingKeyPems: readonly string[] | undefined;
  readonly tlsDerive: string | undefined;
  /** Provider id and client secret, in the ring's order. */
  readonly idpClientSecrets: readonly (readonly [string, string])[];
  readonly metricsBasicAuth: string | undefined;
  readonly databrokerConnection: string | undefined;
}

/** The secrets of `keys`, revealed, as plain data (see PlainSecrets). */
export function plainSecrets(keys: KeySecrets): PlainSecrets {
  return {
    sharedSecret: keys.sharedSecret,
    cookieSecret: keys.cookieSecret,
    generated: keys.generated,
    signingKeyPems: keys.signingKeyPems?.reveal(),
    tlsDerive: keys.tlsDerive,
    idpClientSecrets: [...keys.idpClientSecrets].map(([id, secret]) => [id, secret.reveal()] as const),
    metricsBasicAuth: keys.metricsBasicAuth?.reveal(),
    databrokerConnection: keys.databrokerConnection?.reveal(),
  };
}

/** The KeySecrets `plain` stands for: Buffers and `Secret` wrappers again. */
export function keySecretsOf(plain: PlainSecrets): KeySecrets {
  const secret = <T>(value: T | undefined): Secret<T> | undefined =>
    value === undefined ? undefined : new Secret(value);
  return {
    sharedSecret: asBuffer(plain.sharedSecret),
    cookieSecret: asBuffer(plain.cookieSecret),
    generated: plain.generated,
    signingKeyPems: secret(plain.signingKeyPems),
    tlsDerive: plain.tlsDerive,
    idpClientSecrets: new Map(plain.idpClientSecrets.map(([id, value]) => [id, new Secret(value)])),
    metricsBasicAuth: secret(plain.metricsBasicAuth),
    databrokerConnection: secret(plain.databrokerConnection),
  };
}

/** True when `a` and `b` hold the same secrets (so the ring on the main thread stays as it is). */
export function samePlainSecrets(a: PlainSecrets, b: PlainSecrets): boolean {
  const sameList = <T>(
    x: readonly T[] | undefined,
    y: readonly T[] | undefined,
    eq: (p: T, q: T) => boolean,
  ) =>
    x === y ||
    (x !== undefined && y !== undefined && x.length === y.length && x.every((v, i) => eq(v, y[i] as T)));
  return (
    asBuffer(a.sharedSecret).equals(b.sharedSecret) &&
    asBuffer(a.cookieSecret).equals(b.cookieSecret) &&
    a.generated.sharedSecret === b.generated.sharedSecret &&
    a.generated.cookieSecret === b.generated.cookieSecret &&
    sameList(a.signingKeyPems, b.signingKeyPems, (p, q) => p === q) &&
    a.tlsDerive === b.tlsDerive &&
    sameList(a.idpClientSecrets, b.idpClientSecrets, (p, q) => p[0] === q[0] && p[1] === q[1]) &&
    a.metricsBasicAuth === b.metricsBasicAuth &&
    a.databrokerConnection === b.databrokerConnection
  );
}

/** `bytes` as a Buffer over the same memory (a structured clone turns a Buffer into a Uint8Array). */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

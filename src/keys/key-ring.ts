import { deriveGrpcCredential } from '../contract/grpc-credential.js';
import { deriveInternalTlsSync, type DerivedTls } from '../pki/derived-tls.js';
import { fallbackCertificates, type FallbackCertificate } from '../pki/fallback-tls.js';
import { SessionHandles } from '../session/handle.js';
import type { Secret } from '../shared/secret.js';
import {
  deriveDecisionKey,
  deriveSigningKey,
  jwksOf,
  loadSigningKey,
  type SigningKey,
} from './signing-key.js';

/**
 * The secrets one config gives (or the process generated in their place), as translate reads them
 * from the config: the only input of `buildKeyRing`.
 */
export interface KeySecrets {
  /** The decoded `shared_secret`, or the process's generated one (see `generated`). */
  readonly sharedSecret: Buffer;
  /** The decoded `cookie_secret`, or the process's generated one (see `generated`). */
  readonly cookieSecret: Buffer;
  /** Which of the two were not configured: the process generated them, so they change on restart. */
  readonly generated: { readonly sharedSecret: boolean; readonly cookieSecret: boolean };
  /**
   * `signing_key`, one PEM block per key: the first signs, every one is published in the JWKS (so
   * operators rotate keys without breaking upstreams that cache them). Absent: the identity signing
   * key is derived from the shared secret.
   */
  readonly signingKeyPems: Secret<readonly string[]> | undefined;
  /** `tls_derive`: the DNS name of the derived internal TLS; absent: no derived TLS. */
  readonly tlsDerive: string | undefined;
  /** Each identity provider's client secret, by provider id (ir.signIn.providers). */
  readonly idpClientSecrets: ReadonlyMap<string, Secret<string>>;
  /** `metrics_basic_auth` (`user:password`). */
  readonly metricsBasicAuth: Secret<string> | undefined;
  /** `databroker_storage_connection_string` (a Redis URL, possibly with a password). */
  readonly databrokerConnection: Secret<string> | undefined;
}

/**
 * Every key and secret the services use for one config, built once per config by the build
 * (translate's file stage) and handed to each service beside the IR, so no service reads a secret
 * from the config or derives a key of its own from it. Every key derived from a secret comes from
 * the one table in shared/key-schedule.ts; the services that seal, MAC or sign with the shared or
 * cookie secret derive their purpose key from it through that table as well.
 */
export interface KeyRing extends KeySecrets {
  /** Signs identity assertions: `signing_key`, or the key derived from the shared secret. */
  readonly signingKey: SigningKey;
  /** The JWKS published at `/.well-known/portcullis/jwks.json`. */
  readonly jwksJson: string;
  /** Signs decision tokens (the fast path); always derived from the shared secret. */
  readonly decisionKey: SigningKey;
  /** Issues and verifies the session handles cookies carry. */
  readonly handles: SessionHandles;
  /** The gRPC credential derived from the shared secret (a split or sidecar Envoy presents it). */
  readonly grpcCredential: string;
  /** The self-signed certificate for names no configured certificate covers. */
  readonly fallbackCertificate: FallbackCertificate;
  /** The derived CA and service certificate when `tls_derive` is set. */
  readonly internalTls: DerivedTls | undefined;
}

/**
 * Builds the key ring for `secrets`. With `previous` (the last good build's ring) made from the
 * same shared secret, signing key and `tls_derive` name, its derived keys are reused as they are
 * (the same objects), so an unchanged reload keeps every key and what was built from them (the
 * authorizer's signer, the snapshot's JWKS) without deriving anything again. Same secrets, same
 * bytes: every derivation is deterministic. Throws SIGNING_KEY_INVALID for a bad `signing_key`
 * and a RangeError for a `tls_derive` that is not a DNS name (validation refuses both first).
 */
export function buildKeyRing(secrets: KeySecrets, previous?: KeyRing): KeyRing {
  if (previous !== undefined && sameDerivation(previous, secrets)) {
    const { signingKey, jwksJson, decisionKey, handles, grpcCredential, fallbackCertificate, internalTls } =
      previous;
    return {
      ...secrets,
      signingKey,
      jwksJson,
      decisionKey,
      handles,
      grpcCredential,
      fallbackCertificate,
      internalTls,
    };
  }
  const pems = secrets.signingKeyPems?.reveal() ?? [];
  const published = pems.length === 0 ? [deriveSigningKey(secrets.sharedSecret)] : pems.map(loadSigningKey);
  const signingKey = published[0] as SigningKey;
  return {
    ...secrets,
    signingKey,
    jwksJson: JSON.stringify(jwksOf(published)),
    decisionKey: deriveDecisionKey(secrets.sharedSecret),
    handles: new SessionHandles(secrets.sharedSecret),
    grpcCredential: deriveGrpcCredential(secrets.sharedSecret),
    fallbackCertificate: fallbackCertificates(secrets.sharedSecret),
    internalTls:
      secrets.tlsDerive === undefined
        ? undefined
        : deriveInternalTlsSync(secrets.sharedSecret, secrets.tlsDerive),
  };
}

/** True when `ring`'s derived keys are what `secrets` would derive. */
function sameDerivation(ring: KeyRing, secrets: KeySecrets): boolean {
  return (
    ring.sharedSecret.equals(secrets.sharedSecret) &&
    samePems(ring.signingKeyPems?.reveal(), secrets.signingKeyPems?.reveal()) &&
    ring.tlsDerive === secrets.tlsDerive
  );
}

function samePems(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  return (
    a === b ||
    (a !== undefined && b !== undefined && a.length === b.length && a.every((pem, i) => pem === b[i]))
  );
}

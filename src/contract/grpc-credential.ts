/**
 * The credential Envoy presents to Portcullis's gRPC port (ADS and ext_authz Check), which both
 * sides derive and check through this module: Envoy's bootstrap and its ext_authz filter carry it
 * as gRPC metadata, and the ADS server and the Authorization service refuse a stream or call
 * without it (UNAUTHENTICATED, nothing answered). Without it any process that reaches
 * `grpc_address` could read every listener and cluster, private keys included, and ask Check.
 *
 * Why a static derived token and not a short-lived one: Envoy's `envoy_grpc` services take only
 * static `initial_metadata`, and a bootstrap cannot be rotated without restarting Envoy, so a token
 * that expired would cut a running Envoy off its control plane. The token is instead bound to its
 * purpose: HKDF-SHA256 over `shared_secret` with its own label, so it is useless as a session or
 * signing key, and leaking a bootstrap reveals nothing about `shared_secret` (HKDF is one-way).
 * Rotating it is rotating `shared_secret` and restarting Portcullis and Envoy; in all-in-one mode
 * without `shared_secret` the secret, and so the token, is new with every process, and the
 * supervised Envoy is started with it. Comparison is constant-time over SHA-256 digests (equal
 * length whatever was presented). The token is a secret: never log it.
 */
import { createHash, hkdfSync, timingSafeEqual } from 'node:crypto';

/** The gRPC metadata key the credential travels in. */
export const GRPC_CREDENTIAL_METADATA_KEY = 'authorization';

/** Scheme of the metadata value: `Bearer <token>`. */
const SCHEME = 'Bearer ';

/** HKDF `info`: binds the derived key to this one use (and version, to allow a change of scheme). */
const LABEL = 'portcullis grpc credential v1';

/** Bytes of derived key material (base64url: 43 characters). */
const TOKEN_BYTES = 32;

/**
 * The token for `sharedSecret` (the decoded `shared_secret`): HKDF-SHA256, empty salt, the
 * purpose label as `info`, base64url. Deterministic, so an operator can compute the one a sidecar
 * Envoy must present (`portcullis grpc-credential`).
 */
export function deriveGrpcCredential(sharedSecret: Uint8Array): string {
  if (sharedSecret.length === 0) throw new RangeError('shared secret is empty');
  return Buffer.from(hkdfSync('sha256', sharedSecret, new Uint8Array(0), LABEL, TOKEN_BYTES)).toString(
    'base64url',
  );
}

/** The metadata value Envoy sends for `token` (`Bearer <token>`). */
export function grpcCredentialValue(token: string): string {
  return `${SCHEME}${token}`;
}

/**
 * A checker for `expected`, made once per server: it answers true when `values` (every value of
 * `GRPC_CREDENTIAL_METADATA_KEY` in a call's metadata) is exactly one `Bearer <expected>`.
 * Missing, repeated, binary or different values are false; the comparison (of SHA-256 digests, so
 * lengths never differ) does not depend on where a wrong value differs. The expected digest is
 * computed here, not on every call.
 */
export function grpcCredentialChecker(expected: string): (values: readonly unknown[]) => boolean {
  const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  const wanted = digest(grpcCredentialValue(expected));
  return (values) =>
    values.length === 1 && typeof values[0] === 'string' && timingSafeEqual(digest(values[0]), wanted);
}

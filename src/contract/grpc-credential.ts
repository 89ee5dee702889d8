/**
 * The credential Envoy presents to Portcullis's gRPC port (ADS and ext_authz Check), which both
 * sides derive and check through this module: Envoy's bootstrap holds it as a static generic SDS
 * secret (`GRPC_CREDENTIAL_SECRET_NAME`), and a `credential_injector` upstream HTTP filter on the
 * two clusters to Portcullis (ADS, authorize) writes it into each gRPC request's `authorization`
 * header; the ADS server and the Authorization service refuse a stream or call without it
 * (UNAUTHENTICATED, nothing answered). Not as gRPC `initial_metadata`: Envoy's admin `config_dump`
 * prints that in full, while it prints every secret `[redacted]`. Without it any process that reaches
 * `grpc_address` could read every listener and cluster, private keys included, and ask Check.
 *
 * Why a static derived token and not a short-lived one: Envoy's `envoy_grpc` services take only
 * static `initial_metadata`, and a bootstrap cannot be rotated without restarting Envoy, so a token
 * that expired would cut a running Envoy off its control plane. The token is instead bound to its
 * purpose: HKDF-SHA256 over `shared_secret` with its own label, so it is useless as a session or
 * signing key, and leaking a bootstrap reveals nothing about `shared_secret` (HKDF is one-way).
 * Rotating it is rotating `shared_secret` and restarting Portcullis and Envoy. In all-in-one mode
 * (this process checks it and starts the Envoy that presents it) the token is instead random and
 * new with every process start (`randomGrpcCredential`): nothing else needs to know it. Comparison is constant-time over SHA-256 digests (equal
 * length whatever was presented). The token is a secret: never log it.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ProtoMessages } from '../../proto/envoy-types.js';
import { deriveKey } from '../shared/key-schedule.js';

type HttpFilter = ProtoMessages['envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter'];

/** The gRPC metadata key the credential travels in. */
export const GRPC_CREDENTIAL_METADATA_KEY = 'authorization';

/** Scheme of the metadata value: `Bearer <token>`. */
const SCHEME = 'Bearer ';

/** Bytes of a random credential (base64url: 43 characters), as many as a derived one has. */
const TOKEN_BYTES = 32;

/**
 * The token for `sharedSecret` (the decoded `shared_secret`): its key-schedule key, base64url. Deterministic, so an operator can compute the one a sidecar
 * Envoy must present (`portcullis grpc-credential`).
 */
export function deriveGrpcCredential(sharedSecret: Uint8Array): string {
  if (sharedSecret.length === 0) throw new RangeError('shared secret is empty');
  return Buffer.from(deriveKey(sharedSecret, 'grpc-credential')).toString('base64url');
}

/**
 * A fresh random token of the derived one's form (32 bytes, base64url), for an all-in-one process:
 * its supervised Envoy is the only client, so the token need not survive the process.
 */
export function randomGrpcCredential(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
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

/** Name of the static generic secret in Envoy's bootstrap that holds `Bearer <token>`. */
export const GRPC_CREDENTIAL_SECRET_NAME = 'portcullis-grpc-credential';

/**
 * The bootstrap's `static_resources.secrets` entry for `token` (proto-JSON): a generic secret whose
 * value is the whole `authorization` value. Envoy's admin API shows it only as `[redacted]`.
 */
export function grpcCredentialSecret(
  token: string,
): ProtoMessages['envoy.extensions.transport_sockets.tls.v3.Secret'] {
  return {
    name: GRPC_CREDENTIAL_SECRET_NAME,
    generic_secret: { secret: { inline_string: grpcCredentialValue(token) } },
  };
}

/**
 * The upstream HTTP filters (proto-JSON, for a cluster's `HttpProtocolOptions.http_filters`) of
 * a cluster to Portcullis's gRPC port: `credential_injector` sets `authorization` from the secret
 * above on every request (`overwrite`: whatever a request carried is replaced, so nothing but the
 * secret reaches Portcullis; a missing secret fails the request), then the mandatory upstream codec.
 * Envoy's `envoy_grpc` clients (ADS, ext_authz) go through their cluster's upstream filters.
 */
export function grpcCredentialUpstreamFilters(): HttpFilter[] {
  const type = 'type.googleapis.com/envoy.extensions';
  return [
    {
      name: 'envoy.filters.http.credential_injector',
      typed_config: {
        '@type': `${type}.filters.http.credential_injector.v3.CredentialInjector` as const,
        overwrite: true,
        allow_request_without_credential: false,
        credential: {
          name: 'envoy.http.injected_credentials.generic',
          typed_config: {
            '@type': `${type}.http.injected_credentials.generic.v3.Generic` as const,
            credential: { name: GRPC_CREDENTIAL_SECRET_NAME },
            header: GRPC_CREDENTIAL_METADATA_KEY,
          },
        },
      },
    },
    {
      name: 'envoy.filters.http.upstream_codec',
      typed_config: { '@type': `${type}.filters.http.upstream_codec.v3.UpstreamCodec` as const },
    },
  ];
}

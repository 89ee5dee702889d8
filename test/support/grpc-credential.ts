import * as grpc from '@grpc/grpc-js';
import {
  GRPC_CREDENTIAL_METADATA_KEY,
  deriveGrpcCredential,
  grpcCredentialValue,
} from '../../src/contract/grpc-credential.js';

/**
 * The gRPC credential tests give their ADS servers, Check services and Envoy bootstraps: derived
 * like the real one, from a fixed test secret.
 */
export const TEST_GRPC_CREDENTIAL = deriveGrpcCredential(Buffer.alloc(32, 0x5a));

/** Metadata carrying `token` as Envoy sends it (`authorization: Bearer <token>`). */
export function credentialMetadata(token: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set(GRPC_CREDENTIAL_METADATA_KEY, grpcCredentialValue(token));
  return metadata;
}

/**
 * grpc-js client options whose interceptor adds `token` to every call's metadata, as Envoy's
 * `initial_metadata` does; undefined sends no credential.
 */
export function credentialClientOptions(
  token: string | undefined = TEST_GRPC_CREDENTIAL,
): grpc.ClientOptions {
  if (token === undefined) return {};
  const interceptor: grpc.Interceptor = (options, nextCall) =>
    new grpc.InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        metadata.set(GRPC_CREDENTIAL_METADATA_KEY, grpcCredentialValue(token));
        next(metadata, listener);
      },
    });
  return { interceptors: [interceptor] };
}

import type { Config } from '../config/types.js';
import type { TranslateOptions } from '../translate/translate.js';
import { ownHttpAddress } from './authenticate-settings.js';
import { splitHostPort } from '../grpc/address.js';
import { deriveInternalTls, type DerivedTls } from '../pki/derived-tls.js';
import { internalEndpoints } from './envoy-endpoints.js';
import { fallbackCertificates } from '../pki/fallback-tls.js';
import type { Identity } from './identity.js';
import { randomGrpcCredential } from '../contract/grpc-credential.js';

/**
 * What the first config fixes for the life of a process, because Envoy's bootstrap carries it or a
 * restarted process must compile the same clusters: the credential Envoy presents, the address of
 * the sign-in endpoints (grpc port + 1) and the TLS `tls_derive` derives.
 */
export interface FixedAtStart {
  readonly credential: string;
  /** True when `credential` is derived from `shared_secret`, false when random (all-in-one). */
  readonly credentialDerived: boolean;
  readonly ownHttp: { readonly host: string; readonly port: number };
  readonly tls: DerivedTls | undefined;
}

/**
 * Fixes them from the first config (deriving the TLS is asynchronous, hence the build's `prepare`).
 * `selfContained`: this process both checks the gRPC credential (authorize and proxy) and starts
 * the only Envoy that presents it (all-in-one), so the credential is random, new with every start,
 * rather than derived from `shared_secret` (which a sidecar Envoy or another process must share).
 */
export async function fixAtStart(
  config: Config,
  identity: Identity,
  selfContained = false,
): Promise<FixedAtStart> {
  return {
    credential: selfContained ? randomGrpcCredential() : identity.grpcCredential,
    credentialDerived: !selfContained,
    ownHttp: ownHttpAddress(splitHostPort(config.grpc_address)),
    tls:
      config.tls_derive === undefined
        ? undefined
        : await deriveInternalTls(identity.sharedSecret, config.tls_derive),
  };
}

/**
 * The translate options for `config`, as the runtime and the dry run (`portcullis compile`) both
 * use them, so the dry run prints what Envoy receives: where Envoy reaches Portcullis (with the
 * derived TLS), the JWKS, the self-signed fallback certificate and the system CA bundle.
 */
export function translateOptionsFor(
  config: Config,
  identity: Identity,
  fixed: FixedAtStart,
  systemCaFile: string,
): TranslateOptions {
  return {
    systemCaFile,
    fallbackCertificate: fallbackCertificates(identity.sharedSecret),
    internal: internalEndpoints(config, {
      jwksJson: identity.jwksJson,
      ownHttp: fixed.ownHttp,
      ...(fixed.tls === undefined
        ? {}
        : { tls: { caPem: fixed.tls.caPem, serverName: fixed.tls.serverName } }),
    }),
  };
}

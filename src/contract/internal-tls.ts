/**
 * How Envoy verifies a Portcullis service it dials (ADS in the bootstrap, ext_authz Check in the
 * compiled clusters) when `tls_derive` is set: TLS 1.2 or later, trusting only the CA derived
 * from `shared_secret` (pki/derived-tls.ts), with SNI and the certificate's DNS SAN both the
 * `tls_derive` name, whatever address the cluster dials. ALPN offers h2 for gRPC (which gRPC
 * servers require) and http/1.1 for the HTTP endpoints. Shared here because the bootstrap (envoy/) and the compiler (xds/) emit the same one.
 */
import type { ProtoMessages } from '../../proto/envoy-types.js';
import { TRANSPORT_SOCKET_TLS } from './names.js';

/** What Envoy needs to verify a Portcullis service: the derived CA (PEM) and the name it certifies. */
export interface InternalTlsPeer {
  readonly caPem: string;
  readonly serverName: string;
}

/**
 * The same, with the derived CA in a file Envoy reads (`portcullis internal-ca` writes it): for a
 * bootstrap that is written before any secret is known (envoy/sidecar.yaml).
 */
export interface InternalTlsPeerFile {
  readonly caFile: string;
  readonly serverName: string;
}

/**
 * The cluster's `transport_socket` (proto-JSON, with its `@type`) for a Portcullis service;
 * `alpn` is what the service speaks (h2 for gRPC, http/1.1 for the HTTP endpoints).
 */
export function internalUpstreamTlsSocket(
  tls: InternalTlsPeer | InternalTlsPeerFile,
  alpn: 'h2' | 'http/1.1' = 'h2',
): ProtoMessages['envoy.config.core.v3.TransportSocket'] {
  return {
    name: TRANSPORT_SOCKET_TLS,
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
      common_tls_context: {
        tls_params: { tls_minimum_protocol_version: 'TLSv1_2' },
        alpn_protocols: [alpn],
        validation_context: {
          trusted_ca: 'caFile' in tls ? { filename: tls.caFile } : { inline_string: tls.caPem },
          match_typed_subject_alt_names: [{ san_type: 'DNS', matcher: { exact: tls.serverName } }],
        },
      },
      sni: tls.serverName,
    },
  };
}

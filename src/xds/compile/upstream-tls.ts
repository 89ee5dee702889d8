import type { IRUpstreamTls } from '../../ir/types.js';
import { typed } from '../../proto/codec.js';
import type { Message } from '../../proto/messages.js';
import { TRANSPORT_SOCKET_TLS } from '../../contract/names.js';
import { isIP } from 'node:net';

/**
 * IR upstream TLS -> the cluster's TLS transport socket. SNI is the `to` host unless
 * `tls_server_name` says otherwise, and the certificate must name that host (exact DNS, or an IP
 * SAN for IP literals). Trust is the system store unless a custom CA is given; `tls_skip_verify`
 * accepts any certificate and checks no name.
 */
export function compileUpstreamTls(tls: IRUpstreamTls): Message<'envoy.config.core.v3.TransportSocket'> {
  const common: Message<'envoy.extensions.transport_sockets.tls.v3.CommonTlsContext'> = {
    tls_params: { tls_minimum_protocol_version: 'TLSv1_2' },
  };
  const validation: Message<'envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext'> = {
    trusted_ca:
      tls.customCaPem !== undefined ? { inline_string: tls.customCaPem } : { filename: tls.systemCaFile },
  };
  if (tls.skipVerify) {
    validation.trust_chain_verification = 'ACCEPT_UNTRUSTED';
  } else {
    validation.match_typed_subject_alt_names = [sanMatcher(tls.serverName)];
  }
  common.validation_context = validation;
  if (tls.clientCertificate !== undefined) {
    common.tls_certificates = [
      {
        certificate_chain: { inline_string: tls.clientCertificate.certPem },
        private_key: { inline_string: tls.clientCertificate.keyPem },
      },
    ];
  }
  const context: Message<'envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext'> = {
    common_tls_context: common,
  };
  if (isIP(tls.serverName) === 0) context.sni = tls.serverName;
  return {
    name: TRANSPORT_SOCKET_TLS,
    typed_config: typed('envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', context),
  };
}

function sanMatcher(
  serverName: string,
): Message<'envoy.extensions.transport_sockets.tls.v3.SubjectAltNameMatcher'> {
  if (isIP(serverName) !== 0) return { san_type: 'IP_ADDRESS', matcher: { exact: serverName } };
  if (serverName.startsWith('*.')) {
    const suffix = serverName.slice(1).replace(/[.+?^${}()|[\]\\]/g, '\\$&');
    return { san_type: 'DNS', matcher: { safe_regex: { regex: `[^.]+${suffix}` } } };
  }
  return { san_type: 'DNS', matcher: { exact: serverName } };
}

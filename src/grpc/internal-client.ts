import type * as grpc from '@grpc/grpc-js';
import type { InternalAudience } from '../contract/internal-token.js';
import { internalCallCredentials, internalChannelCredentials, type InternalTrust } from './internal-grpc.js';
import type { DerivedTls } from '../pki/derived-tls.js';

/**
 * How this process calls the other Portcullis services over gRPC: TLS verified against the CA
 * `tls_derive` derives, or, for an `https://` service URL without it, against
 * `certificate_authority` and the URL's own host; insecure for an `http://` one. On every call a
 * short-lived token for the callee's audience, signed with a key derived from `shared_secret`.
 */
export interface InternalClient {
  /** The channel settings for calling `audience` at `url` (its validated service URL). */
  channel(
    audience: InternalAudience,
    url: URL,
  ): {
    readonly credentials: grpc.ChannelCredentials;
    readonly callCredentials: grpc.CallCredentials;
    readonly channelOptions: grpc.ChannelOptions;
  };
}

/**
 * The InternalClient for `sharedSecret`, the derived TLS (undefined: no `tls_derive`) and the
 * `certificate_authority` PEM (used only without `tls_derive`, for `https://` URLs). Throws from
 * `channel` on an `https://` URL with neither (validation refuses that configuration).
 */
export function internalClient(
  sharedSecret: Uint8Array,
  tls: DerivedTls | undefined,
  certificateAuthorityPem?: string,
): InternalClient {
  return {
    channel(audience, url) {
      const { credentials, options } = internalChannelCredentials(
        internalTrust(url, tls, certificateAuthorityPem),
      );
      return {
        credentials,
        callCredentials: internalCallCredentials(() => sharedSecret, audience),
        channelOptions: options,
      };
    },
  };
}

/**
 * What a client of the service at `url` trusts: the derived CA and name when `tls_derive` is set
 * (every URL is then https://), the CA bundle and the URL's own host for an https:// URL without
 * it, nothing (insecure) for an http:// one.
 */
export function internalTrust(
  url: URL,
  derived: DerivedTls | undefined,
  certificateAuthorityPem: string | undefined,
): InternalTrust | undefined {
  if (derived !== undefined) return { caPem: derived.caPem, serverName: derived.serverName };
  if (url.protocol !== 'https:') return undefined;
  if (certificateAuthorityPem === undefined) {
    throw new Error(
      `${url.origin}: https:// needs tls_derive or certificate_authority (validation requires one)`,
    );
  }
  return { caPem: certificateAuthorityPem };
}

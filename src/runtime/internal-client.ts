import type * as grpc from '@grpc/grpc-js';
import type { InternalAudience } from '../contract/internal-token.js';
import { internalCallCredentials, internalChannelCredentials } from './internal-grpc.js';
import type { DerivedTls } from './derived-tls.js';

/**
 * How this process calls the other Portcullis services over gRPC: TLS verified against the CA
 * `tls_derive` derives (insecure without it), and on every call a short-lived token for the
 * callee's audience, signed with a key derived from `shared_secret`.
 */
export interface InternalClient {
  channel(audience: InternalAudience): {
    readonly credentials: grpc.ChannelCredentials;
    readonly callCredentials: grpc.CallCredentials;
    readonly channelOptions: grpc.ChannelOptions;
  };
}

/** The InternalClient for `sharedSecret` and the derived TLS (undefined: no `tls_derive`). */
export function internalClient(sharedSecret: Uint8Array, tls: DerivedTls | undefined): InternalClient {
  return {
    channel(audience) {
      const { credentials, options } = internalChannelCredentials(tls);
      return {
        credentials,
        callCredentials: internalCallCredentials(() => sharedSecret, audience),
        channelOptions: options,
      };
    },
  };
}

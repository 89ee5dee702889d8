import type { Logger } from '../../../shared/logger.js';
import type { Authorizer } from '../authorization-service.js';
import { GRPC_PREFIX_BYTES, MAX_CHECK_MESSAGE_BYTES } from '../check-call.js';

/** Bounds of one h2c Check connection. */
export interface H2cLimits {
  /** SETTINGS_MAX_CONCURRENT_STREAMS; more open streams are refused (REFUSED_STREAM). */
  readonly maxConcurrentStreams: number;
  /** Largest header block (HEADERS + CONTINUATION payloads); more closes the connection. */
  readonly maxHeaderBlockBytes: number;
  /** Receive window of the connection: request bytes buffered but not yet answered stay below it. */
  readonly connectionWindowBytes: number;
}

/** Defaults: far above what Envoy's ext_authz client uses, small enough to bound memory. */
export const DEFAULT_H2C_LIMITS: H2cLimits = {
  maxConcurrentStreams: 256,
  maxHeaderBlockBytes: 64 * 1024,
  connectionWindowBytes: 4 * 1024 * 1024,
};

/** Per-stream receive window we advertise: one whole CheckRequest fits, so none needs a WINDOW_UPDATE. */
export const STREAM_WINDOW_BYTES = MAX_CHECK_MESSAGE_BYTES + GRPC_PREFIX_BYTES + 16 * 1024;

/** What a connection needs besides its socket. */
export interface H2cConnectionOptions {
  readonly authorize: Authorizer;
  readonly logger: Logger;
  readonly limits?: H2cLimits;
}

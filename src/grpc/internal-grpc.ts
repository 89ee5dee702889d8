/**
 * grpc-js glue for calls between Portcullis services: the transport (TLS from `tls_derive`, see
 * derived-tls.ts, TLS trusting `certificate_authority`, or insecure) and internal tokens
 * (contract/internal-token.ts), which the client side mints and attaches (`authorization: Bearer
 * <token>`) and the server side checks. Both keep their state in the object they return (never in
 * the module), so two clients or servers in one process, or a test, never share a token or a cache.
 */
import * as grpc from '@grpc/grpc-js';
import {
  INTERNAL_TOKEN_LIFETIME_S,
  mintInternalToken,
  verifyInternalTokenExpiry,
  type InternalAudience,
} from '../contract/internal-token.js';
import type { DerivedTls } from '../pki/derived-tls.js';

/** The metadata key internal tokens travel in (the same one Envoy's static credential uses). */
export const INTERNAL_TOKEN_METADATA_KEY = 'authorization';

const SCHEME = 'Bearer ';

/** A client mints a new token once the one it holds is this close to expiry. */
const REMINT_BEFORE_EXPIRY_MS = 60_000;

/** How many verified tokens a server remembers (each caller holds one at a time, two around renewal). */
const VERIFIED_TOKENS_KEPT = 64;

/**
 * A TLS handshake must finish within this time, or its connection is closed: Node's default
 * (120 s) would let a peer that connects and sends nothing hold a descriptor for two minutes.
 */
const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;

/**
 * What `grpc.ServerCredentials.createSsl` builds (no client certificate asked for), with the
 * handshake bounded: grpc-js passes the constructor options to `http2.createSecureServer`, and
 * `createSsl` has no parameter for `handshakeTimeout`.
 */
class BoundedTlsServerCredentials extends grpc.ServerCredentials {
  constructor(keyPem: string, certPem: string) {
    super(
      { requestCert: false, handshakeTimeout: TLS_HANDSHAKE_TIMEOUT_MS },
      { key: [Buffer.from(keyPem)], cert: [Buffer.from(certPem)] },
    );
  }

  _equals(other: grpc.ServerCredentials): boolean {
    return other === this;
  }
}

/**
 * gRPC server credentials for internal services: TLS with the derived service certificate (no
 * client certificate asked for: callers authenticate with internal tokens; a handshake bounded to
 * 10 s), or insecure when `tls_derive` is unset.
 */
export function internalServerCredentials(tls: DerivedTls | undefined): grpc.ServerCredentials {
  if (tls === undefined) return grpc.ServerCredentials.createInsecure();
  return new BoundedTlsServerCredentials(tls.keyPem, tls.certPem);
}

/**
 * What an internal client trusts over TLS: a CA bundle (PEM) and, for `tls_derive`, the name every
 * service certificate carries (`serverName`); without it (`certificate_authority`) the peer's
 * certificate must name the host that is dialled, the service URL's own.
 */
export interface InternalTrust {
  readonly caPem: string;
  readonly serverName?: string;
}

/**
 * gRPC channel credentials and options for calling an internal service: TLS trusting only
 * `trust.caPem`, checking the peer's certificate against `trust.serverName` whatever address is
 * dialled (`grpc.ssl_target_name_override`, with the same `:authority`) when it is given, else
 * against the dialled host (grpc-js's own check); insecure when `trust` is undefined. Internal
 * tokens (internalCallCredentials) are composed with TLS credentials, or passed per call
 * (`{ credentials }` in the call options): grpc-js refuses to compose call credentials with
 * insecure ones, but sends per-call ones on any channel.
 */
export function internalChannelCredentials(trust: InternalTrust | undefined): {
  credentials: grpc.ChannelCredentials;
  options: grpc.ChannelOptions;
} {
  if (trust === undefined) return { credentials: grpc.credentials.createInsecure(), options: {} };
  const credentials = grpc.credentials.createSsl(Buffer.from(trust.caPem));
  if (trust.serverName === undefined) return { credentials, options: {} };
  return {
    credentials,
    options: {
      'grpc.ssl_target_name_override': trust.serverName,
      'grpc.default_authority': trust.serverName,
    },
  };
}

/**
 * Call credentials that add `authorization: Bearer <token>` for `audience` to every call, minted
 * from `secret()` (the decoded `shared_secret`, read on each mint so a reload that changes it is
 * followed). One token is reused until it is within a minute of its five-minute expiry, or until
 * the secret changes; concurrent calls at renewal share one mint. Compose them with TLS channel
 * credentials, or pass them per call (`{ credentials }`), which grpc-js also honours on insecure
 * channels.
 */
export function internalCallCredentials(
  secret: () => Uint8Array,
  audience: InternalAudience,
  now: () => number = Date.now,
): grpc.CallCredentials {
  let held: { token: string; refreshAt: number; secret: Uint8Array } | undefined;
  let minting: Promise<string> | undefined;
  const current = (): Promise<string> => {
    const key = secret();
    const at = now();
    if (held !== undefined && at < held.refreshAt && sameBytes(held.secret, key)) {
      return Promise.resolve(held.token);
    }
    minting ??= mintInternalToken(key, audience, at)
      .then((token) => {
        const refreshAt = at + INTERNAL_TOKEN_LIFETIME_S * 1000 - REMINT_BEFORE_EXPIRY_MS;
        held = { token, refreshAt, secret: Uint8Array.from(key) };
        return token;
      })
      .finally(() => {
        minting = undefined;
      });
    return minting;
  };
  return grpc.credentials.createFromMetadataGenerator((_params, callback) => {
    current().then(
      (token) => {
        const metadata = new grpc.Metadata();
        metadata.set(INTERNAL_TOKEN_METADATA_KEY, `${SCHEME}${token}`);
        callback(null, metadata);
      },
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err))),
    );
  });
}

/**
 * A check of a call's metadata, made once per server: true when it carries exactly one
 * `authorization: Bearer <token>` whose token is a valid internal token for `audience` under
 * `secret()` (verifyInternalTokenExpiry: alg, type, issuer, audience, expiry and lifetime pinned).
 * Verified tokens are remembered until their expiry (at most 64, oldest forgotten first; all
 * forgotten when the secret changes), so a caller's repeated calls cost a map lookup and the
 * answer is then synchronous; an unknown token is verified with jose (asynchronous). Never throws
 * or rejects: anything unexpected is false.
 */
export function internalCallAuthorizer(
  secret: () => Uint8Array,
  audience: InternalAudience,
  now: () => number = Date.now,
): (metadata: grpc.Metadata) => Promise<boolean> | boolean {
  const verified = new Map<string, number>();
  let verifiedUnder: Uint8Array = new Uint8Array(0);
  return (metadata) => {
    const values = metadata.get(INTERNAL_TOKEN_METADATA_KEY);
    const [value] = values;
    if (values.length !== 1 || typeof value !== 'string' || !value.startsWith(SCHEME)) return false;
    const token = value.slice(SCHEME.length);
    const key = secret();
    const at = now();
    if (!sameBytes(key, verifiedUnder)) {
      verified.clear();
      verifiedUnder = Uint8Array.from(key);
    }
    const expiresAt = verified.get(token);
    if (expiresAt !== undefined) {
      if (at < expiresAt) return true;
      verified.delete(token);
    }
    return verifyInternalTokenExpiry(token, key, audience, at).then(
      (expiry) => {
        if (expiry === undefined) return false;
        if (sameBytes(key, verifiedUnder)) remember(verified, token, expiry);
        return true;
      },
      () => false,
    );
  };
}

function remember(verified: Map<string, number>, token: string, expiresAt: number): void {
  verified.delete(token);
  verified.set(token, expiresAt);
  for (const oldest of verified.keys()) {
    if (verified.size <= VERIFIED_TOKENS_KEPT) break;
    verified.delete(oldest);
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

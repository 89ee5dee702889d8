import type * as grpc from '@grpc/grpc-js';
import type { Telemetry } from '../contract/telemetry.js';
import type { IR } from '../ir/types.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { SessionStore } from '../session/session.js';
import type { Logger } from '../shared/logger.js';
import type { SpanStarter } from '../shared/trace-context.js';
import { AuthorizeService } from './service.js';
import type { HostChanges } from './authz-state.js';

/** What the authorize service needs from the process that runs it. */
export interface AuthorizeDeps {
  readonly sessions: SessionStore;
  readonly logger: Logger;
  /** The process's gRPC server (on `grpc_address`), where ext_authz Check is registered. */
  readonly grpcServer: grpc.Server;
  /** The credential Envoy presents to Check (contract/grpc-credential.ts). */
  readonly envoyCredential: string;
  readonly telemetry: Telemetry;
  readonly tracer: SpanStarter;
  /** Hands `install` every accepted build (the current one at once), in subscription order. */
  readonly subscribe: (name: string, install: (ir: IR, keys: KeyRing, changes?: HostChanges) => void) => void;
  /**
   * Until when (Unix ms) Envoy refuses a decision session's tokens (the fast path's revocations);
   * the authorizer mints none for it before then. Absent: no revocation known here.
   */
  readonly revokedUntil?: (decisionSid: string) => number | undefined;
}

/**
 * Starts the authorize service: its state follows every accepted build (subscribed before the xDS
 * snapshot, so a route's policy is installed before Envoy can route by it), and Check is served on
 * the process's gRPC server once it listens.
 */
export function startAuthorize(deps: AuthorizeDeps): AuthorizeService {
  const service = new AuthorizeService(
    deps.sessions,
    deps.logger,
    deps.revokedUntil === undefined ? {} : { revokedUntil: deps.revokedUntil },
  );
  deps.subscribe('authorize', (ir, keys, changes) => service.install(ir, keys, changes));
  service.register(deps.grpcServer, deps.envoyCredential, deps.telemetry, deps.tracer);
  return service;
}

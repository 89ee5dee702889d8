import type { HostChanges } from './route-locator.js';
import type { Telemetry } from '../contract/telemetry.js';
import type { IR } from '../ir/types.js';
import type { IRAddress } from '../ir/services.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { RecordBackend } from '../session/records.js';
import type { SessionStore } from '../session/session.js';
import type { Logger } from '../shared/logger.js';
import type { SpanStarter } from '../shared/trace-context.js';
import { RecordReplayGuard } from './flow/replay-guard.js';
import { AuthenticateService } from './service.js';

/** What the authenticate service needs from the process that runs it. */
export interface AuthenticateDeps {
  readonly sessions: SessionStore;
  /** The record store the sessions live in: single use of sign-in states, refresh leases. */
  readonly backend: RecordBackend;
  readonly logger: Logger;
  readonly telemetry: Telemetry;
  readonly tracer: SpanStarter;
  /** Serve the HTTP endpoints over TLS with this certificate (`tls_derive`, fixed at start). */
  readonly tls: { readonly certPem: string; readonly keyPem: string } | undefined;
  /** Deadline of each identity-provider call; absent: the service's default. */
  readonly idpTimeoutMs: number | undefined;
  /** Hands `install` every accepted build (the current one at once), in subscription order. */
  readonly subscribe: (name: string, install: (ir: IR, keys: KeyRing, changes?: HostChanges) => void) => void;
}

/** The started authenticate service, and how to open its HTTP listener. */
export interface StartedAuthenticate {
  readonly service: AuthenticateService;
  /** Listens at `address` (fixed by the first build: grpc port + 1); resolves with the bound address. */
  listen(address: IRAddress): Promise<IRAddress>;
}

/**
 * Starts the authenticate service: sign-in settings and identity-provider clients follow every
 * accepted build; the HTTP endpoints open with `listen` (the caller opens them after gRPC, so a
 * taken `grpc_address` is reported as such).
 */
export function startAuthenticate(deps: AuthenticateDeps): StartedAuthenticate {
  const service = new AuthenticateService(deps.sessions, deps.logger, {
    ...(deps.idpTimeoutMs === undefined ? {} : { idpTimeoutMs: deps.idpTimeoutMs }),
    replay: new RecordReplayGuard(deps.backend, Date.now),
    lease: deps.backend,
    telemetry: deps.telemetry,
    tracer: deps.tracer,
    ...(deps.tls === undefined ? {} : { tls: deps.tls }),
  });
  deps.subscribe('authenticate', (ir, keys, changes) => service.install(ir, keys, changes));
  return { service, listen: (address) => service.listen(address.host, address.port) };
}

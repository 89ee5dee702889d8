import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Server as TlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { IR } from '../ir/types.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { Session, SessionStore } from '../session/session.js';
import type { Logger } from '../shared/logger.js';
import { NO_TELEMETRY, type Telemetry } from '../contract/telemetry.js';
import type { SpanStarter } from '../shared/trace-context.js';
import { PortcullisError, errorMessage } from '../shared/errors.js';
import type { AuthenticateSettings } from './types.js';
import type { HandlerContext, ReplayGuard } from './http/types.js';
import { createOwnServer } from './http/server.js';
import { createRouteLocator, type CompiledRouteLocator, type HostChanges } from './route-locator.js';
import { ProviderRegistry } from './providers/registry.js';
import { SessionRefresher, type RefreshLease, type RefreshOutcome } from './refresh/refresher.js';
import { signInSettings } from './settings.js';

/** Deadline of each call to an identity provider (discovery, JWKS, token, userinfo, revocation). */
export const IDP_TIMEOUT_MS = 10_000;

/** What the authenticate service holds for the config it runs. */
interface Installed {
  readonly settings: AuthenticateSettings;
  readonly ir: IR;
  readonly locator: CompiledRouteLocator;
  readonly handles: HandlerContext['handles'];
}

/**
 * The authenticate service: Portcullis's own HTTP server (sign-in, IdP
 * callback, handoff, sign-out, user page, programmatic login; src/authenticate/http), the
 * identity-provider clients of the current config (kept across reloads when unchanged), and the
 * refresher that renews sessions before their tokens expire. Each accepted build replaces the
 * settings and routes as one reference, so a request finishes on the config it started with.
 */
export class AuthenticateService {
  private installed: Installed | undefined;
  private readonly providers: ProviderRegistry;
  private readonly refresher: SessionRefresher;
  private readonly server: Server | TlsServer;
  private readonly replay: ReplayGuard;
  private address: { host: string; port: number } | undefined;
  private readonly now: () => number;
  private readonly telemetry: Telemetry;
  private readonly tracer: SpanStarter | undefined;

  constructor(
    private readonly sessions: SessionStore,
    private readonly logger: Logger,
    options: {
      /** Single use of sign-in states and handoffs, across every instance that shares the store. */
      readonly replay: ReplayGuard;
      /** Leases of the shared store, so one instance at a time refreshes a session. */
      readonly lease?: RefreshLease;
      /** Serve the HTTP endpoints over TLS with this certificate (`tls_derive`). */
      readonly tls?: { readonly certPem: string; readonly keyPem: string };
      readonly now?: () => number;
      readonly idpTimeoutMs?: number;
      /** Where sign-ins, sign-outs and refreshes are counted (metrics); default NO_TELEMETRY. */
      readonly telemetry?: Telemetry;
      /** Traces the sign-in callback (authenticate/http/traced.ts); default: no spans. */
      readonly tracer?: SpanStarter;
    },
  ) {
    this.now = options.now ?? Date.now;
    this.replay = options.replay;
    this.telemetry = options.telemetry ?? NO_TELEMETRY;
    this.tracer = options.tracer;
    const now = this.now;
    this.providers = new ProviderRegistry({
      timeoutMs: options.idpTimeoutMs ?? IDP_TIMEOUT_MS,
      // Validation (parse-identity.ts) refuses every http:// identity provider not on this machine.
      allowInsecureRequests: true,
      logger: logger.child({ component: 'idp' }),
      now,
    });
    this.refresher = new SessionRefresher({
      sessions,
      provider: (id) => this.providers.get(id),
      sharedSecret: () => this.current().settings.sharedSecret,
      now,
      logger,
      ...(options.lease === undefined ? {} : { lease: options.lease }),
      telemetry: this.telemetry,
    });
    this.server = createOwnServer(this.context(), options.tls === undefined ? {} : { tls: options.tls });
  }

  /**
   * Installs an accepted config: its settings, routes and identity-provider clients. Throws (the
   * reload then fails and the last good config keeps serving) when a client cannot be built.
   * `changes` (the hosts the build changed relative to an earlier IR) lets the locator be patched.
   */
  install(ir: IR, keys: KeyRing, changes?: HostChanges): void {
    if (ir.signIn === undefined) {
      this.installed = undefined;
      this.providers.update(new Map());
      return;
    }
    const settings = signInSettings(ir.signIn, keys);
    // Validation refuses http:// identity providers that are not on this machine.
    this.providers.update(settings.providers);
    // The last config's locator lends the matchers of the virtual hosts this build kept; with
    // `changes` from its IR, its domain index is patched for the hosts they name only.
    const locator = createRouteLocator(ir, this.installed?.locator, changes);
    this.installed = { settings, ir, locator, handles: keys.handles };
  }

  /**
   * Starts the HTTP server on `host:port` (0 picks a free port) and resolves with the address
   * Envoy must reach (IRInternal.http). Call before the first config is translated.
   */
  async listen(host = '127.0.0.1', port = 0): Promise<{ host: string; port: number }> {
    await new Promise<void>((resolve, reject) => {
      const failed = (err: Error): void =>
        reject(
          new PortcullisError(
            'HTTP_BIND_FAILED',
            `cannot listen on ${host}:${port} for sign-in (Portcullis's own HTTP endpoints take the port after grpc_address's): ${errorMessage(err)}`,
          ),
        );
      this.server.once('error', failed);
      this.server.listen(port, host, () => {
        this.server.off('error', failed);
        resolve();
      });
    });
    const bound = this.server.address() as AddressInfo;
    this.address = { host, port: bound.port };
    return this.address;
  }

  /** Where the HTTP server listens; throws before `listen`. */
  endpoint(): { host: string; port: number } {
    if (this.address === undefined) throw new Error('the authenticate HTTP server is not listening yet');
    return this.address;
  }

  /** Schedules the refresh of a session made elsewhere (tests, imports). */
  track(session: Session): void {
    this.refresher.track(session);
  }

  /**
   * Refreshes a session's tokens now instead of at its scheduled time (tests, operators). Single
   * flight like the scheduled refresh: concurrent calls for one session share one IdP call and its
   * outcome ('refreshed', 'ended' when the IdP refused, 'kept' when it was unavailable). Never throws.
   */
  refreshNow(sessionId: string): Promise<RefreshOutcome> {
    return this.refresher.refresh(sessionId);
  }

  /** Stops the refresher and the HTTP server (open connections are closed). */
  async close(): Promise<void> {
    this.refresher.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private current(): Installed {
    if (this.installed === undefined) throw new Error('sign-in is not configured (authenticate_service_url)');
    return this.installed;
  }

  /** The handlers' view: current settings and routes by reference, sessions tracked for refresh. */
  private context(): HandlerContext {
    const sessions = this.sessions;
    const refresher = this.refresher;
    return {
      settings: () => this.current().settings,
      routes: () => this.current().locator,
      ir: () => this.current().ir,
      provider: (id) => this.providers.get(id),
      sessions: {
        get: (id) => sessions.get(id),
        put: async (session) => {
          await sessions.put(session);
          refresher.track(session);
        },
        delete: (id) => sessions.delete(id),
        onInvalidate: (listener) => sessions.onInvalidate(listener),
      },
      handles: {
        issue: (id) => this.current().handles.issue(id),
        verify: (handle) => this.current().handles.verify(handle),
      },
      replay: this.replay,
      now: this.now,
      randomId: () => randomUUID(),
      logger: this.logger.child({ component: 'authenticate' }),
      telemetry: this.telemetry,
      ...(this.tracer === undefined ? {} : { tracer: this.tracer }),
    };
  }
}

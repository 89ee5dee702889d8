import type * as grpc from '@grpc/grpc-js';
import type { IR } from '../ir/types.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { Logger } from '../shared/logger.js';
import { AuthzStateHolder } from './authz-state-holder.js';
import type { HostChanges } from './authz-state.js';
import { createAuthorizer } from './authorizer.js';
import { registerAuthorizationService, type Authorizer } from './ext-authz/authorization-service.js';
import { AssertionSigner } from './identity/assertion-cache.js';
import { DecisionMinter, type RevokedUntil } from './fast-path/decision-minter.js';
import type { SessionStore } from '../session/session.js';
import { openTokens } from '../session/session-tokens.js';
import { SessionTokenCache } from './identity/token-headers.js';
import { NO_TELEMETRY, type Telemetry } from '../contract/telemetry.js';
import type { SpanStarter } from '../shared/trace-context.js';

/** Options of the AuthorizeService. */
export interface AuthorizeServiceOptions {
  /** When each session's decision tokens were revoked (AuthorizerDeps.revokedUntil); default none. */
  readonly revokedUntil?: RevokedUntil;
}

/**
 * The authorize service: installs each accepted build's policies (before Envoy sees its routes) and
 * keys, and registers the ext_authz Check service that answers with its authorizer on the gRPC
 * server (`register`). It reads the IR and the key ring, never the config. It holds the caches
 * of signed assertions, decision tokens and opened session tokens; a session's entries go the
 * moment the store invalidates it.
 */
export class AuthorizeService {
  private readonly holder = new AuthzStateHolder();
  private keys: KeyRing | undefined;
  private signer: AssertionSigner | undefined;
  private readonly decisions = new DecisionMinter(() => {
    if (this.keys === undefined) throw new Error('no config installed yet');
    return this.keys.decisionKey;
  });

  /** Sessions' opened tokens, for routes whose request headers name them. */
  private readonly tokens = new SessionTokenCache((session) => {
    if (this.keys === undefined) throw new Error('no config installed yet');
    return openTokens(this.keys.sharedSecret, session.id, session.tokens);
  });

  constructor(
    private readonly sessions: SessionStore,
    private readonly logger: Logger,
    private readonly options: AuthorizeServiceOptions = {},
  ) {
    sessions.onInvalidate((id) => {
      this.signer?.invalidate(id);
      this.decisions.invalidate(id);
      this.tokens.invalidate(id);
    });
  }

  /**
   * Installs an accepted build: its policies, claim headers and keys. The assertion signer (and
   * its cache of signed assertions) is kept while the signing key, claims and groups filter stay;
   * cached decision tokens never outlive the config they were minted under. `changes` (the hosts
   * the build changed relative to an earlier IR, see `HostChanges`) lets the state be patched.
   */
  install(ir: IR, keys: KeyRing, changes?: HostChanges): void {
    const claimNames = Object.values(ir.authorize.claimHeaders);
    const groups = ir.authorize.groupsFilter;
    const sameSigner =
      this.signer !== undefined &&
      this.keys?.signingKey === keys.signingKey &&
      sameList(this.signer.claimNames, claimNames) &&
      sameList([...(this.signer.groupsFilter ?? [])], groups ?? []) &&
      (this.signer.groupsFilter === undefined) === (groups === undefined);
    if (!sameSigner) {
      this.signer = new AssertionSigner(
        keys.signingKey,
        claimNames,
        groups === undefined ? undefined : new Set(groups),
      );
    }
    if (this.keys !== undefined && !this.keys.sharedSecret.equals(keys.sharedSecret)) this.tokens.clear();
    this.keys = keys;
    this.holder.install(ir, changes);
    this.decisions.clear();
  }

  /**
   * Forgets the policies of routes that configs dropped: call once every Envoy holds the latest
   * config's routes (`MakeBeforeBreak`'s `onSettled`). Until then a Check naming such a route is
   * judged by the policy it last had (see `AuthzStateHolder`).
   */
  releaseRetiredRoutes(): void {
    this.holder.release();
  }

  /** The handles of the current config (tests and the authenticate service issue sessions with it). */
  handles(): KeyRing['handles'] {
    if (this.keys === undefined) throw new Error('no config installed yet');
    return this.keys.handles;
  }

  /**
   * Adds `envoy.service.auth.v3.Authorization` to the grpc-js `server` (the one on `grpc_address`,
   * beside ADS), answering each Check with `authorizer()` when it presents `credential` (Envoy's,
   * see contract/grpc-credential.ts). Each answered Check is reported to `telemetry` (metrics)
   * and, with a `tracer`, traced as a child of Envoy's span.
   */
  register(
    server: grpc.Server,
    credential: string,
    telemetry: Telemetry = NO_TELEMETRY,
    tracer?: SpanStarter,
  ): void {
    registerAuthorizationService(server, this.authorizer(), this.logger, credential, {
      telemetry,
      ...(tracer === undefined ? {} : { tracer }),
    });
  }

  /** The authorizer over this service's current state, sessions, handles, signer and token minter. */
  authorizer(): Authorizer {
    const sessions = this.sessions;
    return createAuthorizer({
      state: () => this.holder.state(),
      // A session this instance holds fresh answers at once; any other is read from the store.
      sessions: { get: (id) => sessions.getSync?.(id) ?? sessions.get(id) },
      verifyHandle: (handle) => this.keys?.handles.verify(handle),
      signer: () => {
        if (this.signer === undefined) throw new Error('no config installed yet');
        return this.signer;
      },
      logger: this.logger,
      decisions: this.decisions,
      tokens: this.tokens,
      ...(this.options.revokedUntil === undefined ? {} : { revokedUntil: this.options.revokedUntil }),
    });
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, index) => item === b[index]);
}

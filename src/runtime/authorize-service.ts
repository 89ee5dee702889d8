import type * as grpc from '@grpc/grpc-js';
import type { Config } from '../config/types.js';
import type { IR } from '../ir/types.js';
import type { Logger } from '../shared/logger.js';
import { AuthzStateHolder } from '../authorize/authz-state-holder.js';
import { createAuthorizer } from '../authorize/authorizer.js';
import {
  registerAuthorizationService,
  type Authorizer,
} from '../authorize/ext-authz/authorization-service.js';
import { AssertionSigner } from '../authorize/identity/assertion-cache.js';
import type { SessionStore } from '../session/session.js';
import { NO_TELEMETRY, type Telemetry } from '../contract/telemetry.js';
import type { SpanStarter } from '../shared/trace-context.js';
import { IdentityResolver, type Identity } from './identity.js';
import type { BuildSubscriber } from './subscribers.js';

/**
 * The authorize service as the runtime runs it: derives keys from each config, installs each
 * accepted config's policies before Envoy sees its routes, and registers the ext_authz Check service that answers
 * with its authorizer on the gRPC server (`register`).
 */
export class AuthorizeService {
  private readonly identities: IdentityResolver;
  private readonly holder = new AuthzStateHolder();
  private identity: Identity | undefined;
  private signer: AssertionSigner | undefined;

  constructor(
    private readonly sessions: SessionStore,
    private readonly logger: Logger,
    /** Shared with the authenticate service, so both derive the same keys from one secret. */
    identities?: IdentityResolver,
  ) {
    this.identities = identities ?? new IdentityResolver(logger);
    sessions.onInvalidate((id) => this.signer?.invalidate(id));
  }

  /** Installs an accepted config: its policies, keys and claim headers. */
  install(config: Config, ir: IR): void {
    const identity = this.identities.resolve(config);
    const claimNames = Object.values(config.jwt_claims_headers);
    const groups = config.jwt_groups_filter;
    const sameSigner =
      this.signer !== undefined &&
      this.identity === identity &&
      sameList(this.signer.claimNames, claimNames) &&
      sameList([...(this.signer.groupsFilter ?? [])], groups ?? []) &&
      (this.signer.groupsFilter === undefined) === (groups === undefined);
    if (!sameSigner) {
      this.signer = new AssertionSigner(
        identity.signingKey,
        claimNames,
        groups === undefined ? undefined : new Set(groups),
      );
    }
    this.identity = identity;
    this.holder.install(ir);
  }

  /**
   * Forgets the policies of routes that configs dropped: call once every Envoy holds the latest
   * config's routes (`MakeBeforeBreak`'s `onSettled`). Until then a Check naming such a route is
   * judged by the policy it last had (see `AuthzStateHolder`).
   */
  releaseRetiredRoutes(): void {
    this.holder.release();
  }

  /** This service as a build subscriber: each accepted build's policies and keys, before Envoy's. */
  subscriber(): BuildSubscriber {
    return { name: 'authorize', publish: (build) => this.install(build.config, build.ir) };
  }

  /** The handles of the current config (tests and the authenticate service issue sessions with it). */
  handles(): Identity['handles'] {
    if (this.identity === undefined) throw new Error('no config installed yet');
    return this.identity.handles;
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

  /** The authorizer over this service's current state, sessions, handles and signer. */
  authorizer(): Authorizer {
    const sessions = this.sessions;
    return createAuthorizer({
      state: () => this.holder.state(),
      // A session this instance holds fresh answers at once; any other is read from the store.
      sessions: { get: (id) => sessions.getSync?.(id) ?? sessions.get(id) },
      verifyHandle: (handle) => this.identity?.handles.verify(handle),
      signer: () => {
        if (this.signer === undefined) throw new Error('no config installed yet');
        return this.signer;
      },
      logger: this.logger,
    });
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, index) => item === b[index]);
}

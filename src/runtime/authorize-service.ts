import type * as grpc from '@grpc/grpc-js';
import type { Config } from '../config/types.js';
import type { IR, IRInternal } from '../ir/types.js';
import type { Logger } from '../shared/logger.js';
import { AuthzStateHolder } from '../authorize/authz-state-holder.js';
import { createAuthorizer } from '../authorize/authorizer.js';
import {
  registerAuthorizationService,
  type Authorizer,
} from '../authorize/ext-authz/authorization-service.js';
import { AssertionSigner } from '../authorize/identity/assertion-cache.js';
import type { SessionStore } from '../session/session.js';
import { IdentityResolver, type Identity } from './identity.js';
import { splitHostPort } from './address.js';
import type { BuildSubscriber } from './subscribers.js';

/**
 * Bound on one ext_authz Check when `authorize_timeout` is 0: a Check answers in well under a
 * millisecond, so a second means the authorizer stalled, and the request gets 503 at once rather
 * than holding a connection for the stall.
 */
const DEFAULT_AUTHORIZE_TIMEOUT_MS = 1000;

/**
 * The authorize service as the runtime runs it: derives keys from each config, tells the compiler
 * where Envoy reaches ext_authz and which JWKS to publish, installs each accepted config's
 * policies before Envoy sees its routes, and registers the ext_authz Check service that answers
 * with its authorizer on the gRPC server (`register`).
 */
export class AuthorizeService {
  private readonly identities: IdentityResolver;
  private readonly holder = new AuthzStateHolder();
  private identity: Identity | undefined;
  private signer: AssertionSigner | undefined;
  /** The gRPC credential of the first config, kept for the life of the process (see grpcCredential). */
  private credential: string | undefined;

  constructor(
    private readonly sessions: SessionStore,
    private readonly logger: Logger,
    /** Shared with the authenticate service, so both derive the same keys from one secret. */
    identities?: IdentityResolver,
  ) {
    this.identities = identities ?? new IdentityResolver(logger);
    sessions.onInvalidate((id) => this.signer?.invalidate(id));
  }

  /**
   * Where Envoy reaches this service and Portcullis's HTTP server (`http`, as the caller bound it),
   * the JWKS and the gRPC credential, for the compiler (per config).
   */
  internalFor(config: Config, http: IRInternal['http']): IRInternal {
    const identity = this.identities.resolve(config);
    return internalEndpoints(config, identity.jwksJson, this.pinCredential(identity.grpcCredential), http);
  }

  /**
   * The credential Envoy presents to ADS and Check (`contract/grpc-credential.ts`), derived from
   * the first config's `shared_secret` (or this process's generated one). It is kept for the life
   * of the process: Envoy's bootstrap carries it and cannot change without a restart, so a reload
   * that changes `shared_secret` keeps it (and says so). Throws before the first config.
   */
  grpcCredential(): string {
    if (this.credential === undefined) throw new Error('no config translated yet');
    return this.credential;
  }

  private pinCredential(derived: string): string {
    if (this.credential === undefined) this.credential = derived;
    else if (derived !== this.credential) {
      this.logger.warn(
        {},
        'shared_secret changed: Envoy keeps the gRPC credential derived at start; restart Portcullis (and a sidecar Envoy) to change it',
      );
    }
    return this.credential;
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
   * beside ADS), answering each Check with `authorizer()` when it presents `grpcCredential()`.
   * Call after the first config was translated.
   */
  register(server: grpc.Server): void {
    registerAuthorizationService(server, this.authorizer(), this.logger, this.grpcCredential());
  }

  /** The authorizer over this service's current state, sessions, handles and signer. */
  authorizer(): Authorizer {
    const sessions = this.sessions;
    return createAuthorizer({
      state: () => this.holder.state(),
      sessions: { get: (id) => (sessions.getSync !== undefined ? sessions.getSync(id) : sessions.get(id)) },
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

/**
 * Where Envoy reaches Portcullis for `config`: ext_authz on the gRPC listener (loopback when it
 * listens on all interfaces), its timeout, the JWKS to publish, the credential ext_authz presents
 * and Portcullis's HTTP server (`http`: the caller binds it, so it passes the address). The dry
 * run uses this too, so `portcullis compile` prints exactly what Envoy receives.
 */
export function internalEndpoints(
  config: Config,
  jwksJson: string,
  authorizeCredential: string,
  http: IRInternal['http'],
): IRInternal {
  return {
    http: dialable(http),
    authorize: dialable(splitHostPort(config.grpc_address)),
    authorizeTimeoutMs:
      config.authorize_timeout_ms > 0 ? config.authorize_timeout_ms : DEFAULT_AUTHORIZE_TIMEOUT_MS,
    jwksJson,
    authorizeCredential,
  };
}

/** The address Envoy dials for a listener of Portcullis's: all interfaces become loopback. */
function dialable(address: { host: string; port: number }): { host: string; port: number } {
  return {
    host: address.host === '0.0.0.0' || address.host === '' ? '127.0.0.1' : address.host,
    port: address.port,
  };
}

import type * as grpc from '@grpc/grpc-js';
import type { IRAddress } from '../ir/services.js';
import type { IR } from '../ir/types.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { DerivedTls } from '../pki/derived-tls.js';
import type { Logger } from '../shared/logger.js';
import type { ServiceName } from '../shared/service-names.js';
import type { Reloader } from '../runtime/reloader.js';
import type { BuildChanges } from '../runtime/subscribers.js';
import type { SessionStack } from '../databroker/stack.js';
import { startDatabroker } from '../databroker/start.js';
import { startAuthorize } from '../authorize/start.js';
import type { AuthorizeService } from '../authorize/service.js';
import { startAuthenticate, type StartedAuthenticate } from '../authenticate/start.js';
import { startXds, type StartedXds } from '../xds/start.js';
import type { SnapshotStore } from '../xds/snapshot/snapshot-store.js';
import type { RevocationFeed } from '../xds/fast-path-revocations.js';
import type { PortcullisMetrics } from '../observability/metrics/portcullis-metrics.js';
import type { PortcullisTracing } from '../observability/tracing/tracing.js';

/**
 * What the first build fixes for the life of the process, because Envoy's bootstrap carries it or a
 * listener is bound to it: the credential Envoy presents, where the HTTP endpoints listen, and the
 * derived TLS.
 */
export interface FixedAtStart {
  readonly credential: string;
  /** True when `credential` is derived from `shared_secret`, false when random (all-in-one). */
  readonly credentialDerived: boolean;
  readonly ownHttp: IRAddress;
  readonly tls: DerivedTls | undefined;
}

/** Stops one started part; `graceMs` is how long in-flight work may take. */
export type Closer = (graceMs: number) => Promise<void> | void;

/** The process's shared parts, which each service's start draws its dependencies from. */
export interface ProcessParts {
  readonly log: Logger;
  readonly reloader: Reloader;
  readonly fixed: FixedAtStart;
  /** The first build's shared secret: it seals records and checks internal tokens for the process's life. */
  readonly sharedSecret: Buffer;
  readonly metrics: PortcullisMetrics;
  readonly tracing: PortcullisTracing;
  readonly store: SnapshotStore;
  /** The session store, where authorize, authenticate or the databroker run. */
  readonly stack: SessionStack | undefined;
  /**
   * The revocation feed (cmd/revocation-feed.ts), where the proxy or authorize runs: the proxy's
   * publishes the fast path's revocations to Envoy; authorize takes its `revokedUntil`, so a
   * session revoked here gets no decision token until Envoy refuses what it held.
   */
  readonly revocations: RevocationFeed | undefined;
  /** The gRPC server on `grpc_address`, where proxy, authorize or the databroker run. */
  readonly grpcServer: grpc.Server | undefined;
  readonly idpTimeoutMs: number | undefined;
  /** Stops what was started, in reverse order; each start adds its own. */
  readonly closers: Closer[];
  /** What the services started so far expose (a later start may use an earlier one's). */
  readonly started: {
    authorize?: AuthorizeService;
    authenticate?: StartedAuthenticate;
    xds?: StartedXds;
  };
}

/**
 * The order services start in, which is also the order they take each build: the authorization
 * state before sign-in, both before the xDS snapshot, so Envoy never routes by a policy Portcullis
 * has not installed.
 */
export const START_ORDER: readonly ServiceName[] = ['databroker', 'authorize', 'authenticate', 'proxy'];

/** Each service's start (its `start(deps)` in its own folder), given the process's parts. */
export const SERVICE_STARTS: Readonly<Record<ServiceName, (process: ProcessParts) => void>> = {
  databroker: (process) => {
    const service = startDatabroker({
      backend: required(process.stack, 'session store').backend,
      grpcServer: required(process.grpcServer, 'gRPC server'),
      sharedSecret: () => process.sharedSecret,
      logger: process.log,
    });
    process.closers.push(() => service.close());
  },
  authorize: (process) => {
    process.started.authorize = startAuthorize({
      sessions: required(process.stack, 'session store').sessions,
      logger: process.log,
      grpcServer: required(process.grpcServer, 'gRPC server'),
      envoyCredential: process.fixed.credential,
      telemetry: process.metrics,
      tracer: process.tracing.tracer,
      subscribe: installer(process.reloader),
      ...(process.revocations === undefined ? {} : { revokedUntil: process.revocations.revokedUntil }),
    });
  },
  authenticate: (process) => {
    const stack = required(process.stack, 'session store');
    const started = startAuthenticate({
      sessions: stack.sessions,
      backend: stack.backend,
      logger: process.log,
      telemetry: process.metrics,
      tracer: process.tracing.tracer,
      tls: process.fixed.tls,
      idpTimeoutMs: process.idpTimeoutMs,
      subscribe: installer(process.reloader),
    });
    process.closers.push(() => started.service.close());
    process.started.authenticate = started;
  },
  proxy: (process) => {
    const xds = startXds({
      store: process.store,
      logger: process.log,
      grpcServer: required(process.grpcServer, 'gRPC server'),
      envoyCredential: process.fixed.credential,
      // Dropped route ids stay until every Envoy has ACKed the routes that no longer use them.
      onSettled: () => process.started.authorize?.releaseRetiredRoutes(),
      subscribe: (name, publish) =>
        process.reloader.subscribe({ name, publish: (build) => publish(build.snapshot) }),
    });
    // Closed before the gRPC server drains: ADS streams never end by themselves.
    process.closers.push(() => xds.ads.close());
    process.started.xds = xds;
  },
};

/** A service's `subscribe`: the reload loop hands it each accepted build's IR and key ring. */
function installer(
  reloader: Reloader,
): (name: string, install: (ir: IR, keys: KeyRing, changes?: BuildChanges) => void) => void {
  return (name, install) =>
    reloader.subscribe({ name, publish: (build) => install(build.ir, build.keys, build.changes) });
}

/** `value`, which the process opens for every service that uses it (a wiring bug otherwise). */
function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} was not opened for this service`);
  return value;
}

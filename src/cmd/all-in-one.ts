import { PortcullisError } from '../shared/errors.js';
import type { Reloader } from '../runtime/reloader.js';
import type { MakeBeforeBreak } from '../xds/publish/make-before-break.js';
import type { AuthorizeService } from '../authorize/service.js';
import type { AuthenticateService } from '../authenticate/service.js';
import type { SessionStack } from '../databroker/stack.js';
import type { RecordSessionStore } from '../databroker/record-session-store.js';
import type { AdsServer } from '../xds/server/ads-server.js';
import type { SnapshotStore } from '../xds/snapshot/snapshot-store.js';
import type { EnvoySupervisor } from '../envoy/supervisor.js';
import { startServices, type Running, type StartOptions } from './start.js';

/** Options of an all-in-one start (see StartOptions). */
export type AllInOneOptions = StartOptions;

/** A running all-in-one Portcullis: every part present, for tests, and a graceful `stop`. */
export interface AllInOne {
  readonly store: SnapshotStore;
  /** The session store (over this process's databroker: memory or Redis). */
  readonly sessions: RecordSessionStore;
  readonly stack: SessionStack;
  readonly authorize: AuthorizeService;
  /** The authenticate service: sign-in, sign-out, user page, programmatic login, session refresh. */
  readonly authenticate: AuthenticateService;
  readonly reloader: Reloader;
  readonly ads: AdsServer;
  /** Publishes each build's snapshot, keeping dropped clusters until every Envoy applied its routes. */
  readonly publisher: MakeBeforeBreak;
  /** The credential Envoy presents to ADS and Check (fixed by the first config). */
  readonly grpcCredential: string;
  readonly grpcPort: number;
  readonly supervisor: EnvoySupervisor | undefined;
  stop(options?: { graceMs?: number }): Promise<void>;
}

/**
 * Starts every service in this process (`services: all`, the default; see `startServices`) and
 * returns its parts. A config that lists fewer services is refused here: tests and tools that want
 * every part call this, and a split process is started by `startServices`.
 */
export async function startAllInOne(options: AllInOneOptions): Promise<AllInOne> {
  const running = await startServices(options);
  const { stack, authorize, authenticate, ads, publisher } = running;
  if (
    stack === undefined ||
    authorize === undefined ||
    authenticate === undefined ||
    ads === undefined ||
    publisher === undefined
  ) {
    await running.stop();
    throw new PortcullisError(
      'NOT_ALL_IN_ONE',
      `${options.configPath}: services lists only some services; start it with \`portcullis run\` (this entry point runs all of them)`,
    );
  }
  return { ...fields(running), stack, sessions: stack.sessions, authorize, authenticate, ads, publisher };
}

function fields(
  running: Running,
): Pick<AllInOne, 'store' | 'reloader' | 'grpcCredential' | 'grpcPort' | 'supervisor' | 'stop'> {
  return {
    store: running.store,
    reloader: running.reloader,
    grpcCredential: running.grpcCredential,
    grpcPort: running.grpcPort,
    supervisor: running.supervisor,
    stop: (stopOptions) => running.stop(stopOptions),
  };
}

import type { IR } from '../ir/types.js';
import type { Logger } from '../shared/logger.js';
import type { Reloader } from '../runtime/reloader.js';
import type { SessionStack } from '../databroker/stack.js';
import { RevocationFeed, type CompileFastPathRbac } from '../xds/fast-path-revocations.js';
import { OVERLAY_TYPE, type SnapshotStore } from '../xds/snapshot/snapshot-store.js';
import type { EncodedResource } from '../xds/snapshot/types.js';
import { FAST_PATH_FILTER } from '../contract/fast-path.js';
import type { ServiceParts } from './services.js';
import type { Closer } from './service-table.js';

/**
 * Whether this process opens the session stack for the revocation feed alone: a proxy without
 * authorize, authenticate or the databroker, with the fast path on and a databroker to reach (its
 * own, or `databroker_service_url`, the connection authorize uses), so its Envoys hear every
 * instance's sign-outs through the change feed. Without one the feed refuses every decision token.
 */
export function proxyNeedsSessions(parts: ServiceParts, ir: IR): boolean {
  return (
    parts.proxy &&
    !(parts.authorize || parts.authenticate || parts.databroker) &&
    ir.authorize.decisionTokenLifetimeMs > 0 &&
    ir.process.databroker.serviceUrl !== undefined
  );
}

/**
 * Starts the process's one revocation feed where the proxy or authorize runs (undefined
 * elsewhere): fed by the session stack's invalidations, following each build's
 * `decision_token_lifetime` (subscribed before the services, so a fast path turned on has its
 * filter in the overlay before the build's listeners name it), publishing into the snapshot
 * store's overlay where the proxy runs. Authorize in the same process takes its `revokedUntil`,
 * so both see one set. Closed with the process, before the stack.
 */
export function startRevocationFeed(options: {
  readonly parts: ServiceParts;
  readonly stack: SessionStack | undefined;
  readonly store: SnapshotStore;
  readonly reloader: Reloader;
  readonly initial: IR;
  readonly logger: Logger;
  readonly closers: Closer[];
  /** Test seam: the feed's compile (default compileFastPathRbac). */
  readonly compile?: CompileFastPathRbac;
}): RevocationFeed | undefined {
  const { parts, stack, store } = options;
  if (!parts.proxy && !parts.authorize) return undefined;
  const feed = new RevocationFeed({
    sessions: stack?.sessions,
    ...(stack === undefined ? {} : { changes: stack.records }),
    lifetimeMs: options.initial.authorize.decisionTokenLifetimeMs,
    ...(parts.proxy ? { overlay: (resources) => store.overlay(besideOthers(store, resources)) } : {}),
    logger: options.logger,
    ...(options.compile === undefined ? {} : { compile: options.compile }),
  });
  options.closers.push(() => feed.close());
  options.reloader.subscribe({
    name: 'fast-path-revocations',
    publish: (build) => feed.setLifetime(build.ir.authorize.decisionTokenLifetimeMs),
  });
  return feed;
}

/**
 * `resources` (the fast path filter, or nothing) with every other resource the overlay serves now,
 * so the feed replaces only its own (tests put filters of their own there).
 */
function besideOthers(
  store: SnapshotStore,
  resources: ReadonlyMap<string, EncodedResource>,
): ReadonlyMap<string, EncodedResource> {
  const served = store.current()?.resources[OVERLAY_TYPE] ?? new Map<string, EncodedResource>();
  const others = [...served].filter(([name]) => name !== FAST_PATH_FILTER);
  return new Map([...others, ...resources]);
}

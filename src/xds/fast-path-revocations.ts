import {
  DECISION_CLOCK_SKEW_S,
  decisionSessionId,
  FAST_PATH_FILTER,
  type DecisionRevocation,
} from '../contract/fast-path.js';
import { encodeMessage } from '../proto/codec.js';
import type { Message } from '../proto/messages.js';
import { TYPED_EXTENSION_CONFIG_TYPE } from '../proto/type-urls.js';
import { DecisionRevocations } from '../session/decision-revocations.js';
import type { RecordChange } from '../session/records.js';
import type { SessionStore } from '../session/session.js';
import { errorMessage } from '../shared/errors.js';
import { shortHash } from '../shared/hash.js';
import type { Logger } from '../shared/logger.js';
import { compileFastPathRbac } from './compile/fast-path-rbac.js';
import type { EncodedResource } from './snapshot/types.js';

/** compileFastPathRbac's contract: the revocations (sorted by sid) and the overflow, as the ECDS resource. */
export type CompileFastPathRbac = (
  revocations: readonly DecisionRevocation[],
  overflowed: boolean,
) => Message<'envoy.config.core.v3.TypedExtensionConfig'>;

/** Options of `RevocationFeed`. */
export interface RevocationFeedOptions {
  /**
   * The process's session store, whose `onInvalidate` names every session deleted or replaced here
   * or (through the change feed) by any other instance. Undefined where this process opened none
   * (a proxy alone without `databroker_service_url`): revocations cannot be seen, so the filter
   * refuses every decision token.
   */
  readonly sessions: Pick<SessionStore, 'onInvalidate'> | undefined;
  /** The store's change feed (SealedRecords' `watch`), for its `lost` and `resumed` states. */
  readonly changes?: { watch(listener: (change: RecordChange) => void): () => void };
  /** The first build's `decision_token_lifetime` (ms); reloads follow through `setLifetime`. */
  readonly lifetimeMs: number;
  /**
   * Where the filter is published (SnapshotStore's `overlay`), given where the proxy runs: ADS then
   * pushes that one resource. It is handed the fast path filter alone, or an empty map for none;
   * keeping any other overlay resource is the caller's. Without it the feed only keeps the set (an
   * authorize process).
   */
  readonly overlay?: (resources: ReadonlyMap<string, EncodedResource>) => boolean;
  /** Default compileFastPathRbac; tests inject their own. */
  readonly compile?: CompileFastPathRbac;
  readonly logger: Logger;
  /** Unix ms (the revocations' clock). Default Date.now. */
  readonly now?: () => number;
  /** Most revocations held before the set overflows. Default 10,000. */
  readonly maxEntries?: number;
  /** Least time between two publishes (ms): a burst of revocations is pushed as one. Default 10. */
  readonly coalesceMs?: number;
  /** How often entries that aged out are dropped and the filter republished (ms). Default 1,000. */
  readonly pruneIntervalMs?: number;
}

const SKEW_MS = DECISION_CLOCK_SKEW_S * 1000;
const DEFAULT_MAX_ENTRIES = 10_000;
const DEFAULT_COALESCE_MS = 10;
const DEFAULT_PRUNE_INTERVAL_MS = 1_000;
/** Distinct failures logged per failing spell, so a failure whose message varies cannot flood the log. */
const MAX_FAILURES_LOGGED = 8;

/**
 * Pushes session revocations to every Envoy (docs/fast-path.md, "Revocation over ADS"). Every
 * session the store invalidates (sign-out, delete, expiry, a refresh refused, changed or plain)
 * revokes its decision tokens minted up to now plus the skew; authorize mints none for it until
 * then (`revokedUntil`). Where the proxy runs, each change compiles the set into the fast path's
 * one ECDS resource and puts it in the snapshot store's overlay, so ADS pushes that small resource
 * and never listeners or routes. Publishes are coalesced: the first change after a quiet spell is
 * pushed at once (after the current burst of I/O), later ones at most every `coalesceMs`.
 *
 * It fails closed. While the change feed is lost every token is refused, and when it resumes
 * every token minted before then is, for one token lifetime (changes may have been missed). A
 * compile that throws publishes the filter that refuses every token instead, and failing that
 * keeps the last good one, retrying on each prune tick. With the lifetime 0 the overlay carries
 * nothing, but revocations are still kept, so turning the fast path back on within a lifetime
 * forgets none.
 */
export class RevocationFeed {
  private readonly revocations: DecisionRevocations;
  private readonly compile: CompileFastPathRbac;
  private readonly now: () => number;
  private readonly coalesceMs: number;
  private readonly logger: Logger;
  private readonly unsubscribe: (() => void)[] = [];
  private readonly pruneTimer: NodeJS.Timeout;
  private lifetimeMs: number;
  /** Whether the overlay carries the filter (false: nothing, as at start or with the lifetime 0). */
  private carriesFilter = false;
  /** Cancels the scheduled publish, if one is. */
  private pending: (() => void) | undefined;
  private lastPublishAt = Number.NEGATIVE_INFINITY;
  /** What failed since the last good publish, each logged once (empty: nothing is failing). */
  private readonly failing = new Set<string>();
  private closed = false;

  constructor(private readonly options: RevocationFeedOptions) {
    this.now = options.now ?? Date.now;
    this.compile = options.compile ?? compileFastPathRbac;
    this.coalesceMs = options.coalesceMs ?? DEFAULT_COALESCE_MS;
    this.logger = options.logger.child({ component: 'fast-path-revocations' });
    this.lifetimeMs = options.lifetimeMs;
    this.revocations = new DecisionRevocations({
      lifetimeMs: options.lifetimeMs,
      skewMs: SKEW_MS,
      maxEntries: options.maxEntries ?? DEFAULT_MAX_ENTRIES,
      now: this.now,
    });
    const { sessions, changes } = options;
    if (sessions === undefined) {
      this.revocations.setFeedLost(true);
      this.warnBlind();
    } else {
      this.unsubscribe.push(sessions.onInvalidate((id) => this.invalidated(id)));
      if (changes !== undefined) this.unsubscribe.push(changes.watch((change) => this.feedChanged(change)));
    }
    this.pruneTimer = setInterval(() => {
      if (this.revocations.prune() || this.failing.size > 0) this.changed();
    }, options.pruneIntervalMs ?? DEFAULT_PRUNE_INTERVAL_MS);
    this.pruneTimer.unref();
    // Before the first build is served, so Envoy has the filter with the first listeners naming it.
    if (this.lifetimeMs > 0) this.publishNow();
  }

  /**
   * Up to when the decision tokens of `decisionSid` are refused (Unix ms), or undefined: authorize
   * mints none for it until then (see DecisionRevocations' `revokedUntil`). Pass it to the
   * authorizer as is.
   */
  readonly revokedUntil = (decisionSid: string): number | undefined =>
    this.revocations.revokedUntil(decisionSid);

  /**
   * Follows a reload's `decision_token_lifetime`. Turned on, the filter is published at once, so
   * it is there before the build's listeners naming it (this subscriber runs before the xDS one);
   * turned off, the overlay empties just after the build that drops the filter.
   */
  setLifetime(lifetimeMs: number): void {
    const was = this.lifetimeMs;
    this.lifetimeMs = lifetimeMs;
    const pruned = this.revocations.setLifetime(lifetimeMs);
    if (was === 0 && lifetimeMs > 0) {
      if (this.options.sessions === undefined) this.warnBlind();
      this.publishNow();
    } else if (pruned || was > 0 !== lifetimeMs > 0) {
      this.changed();
    }
  }

  /** Stops following the store and every timer; what was published stays. */
  close(): void {
    this.closed = true;
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
    clearInterval(this.pruneTimer);
    this.pending?.();
    this.pending = undefined;
  }

  private invalidated(sessionId: string): void {
    const overflowed = this.revocations.overflowed();
    if (!this.revocations.revoke(decisionSessionId(sessionId), this.now() + SKEW_MS)) return;
    if (!overflowed && this.revocations.overflowed()) {
      this.logger.warn(
        { held: this.revocations.size },
        'more sessions were revoked within one decision token lifetime than the fast path holds: it refuses every decision token until they age out',
      );
    }
    this.changed();
  }

  private feedChanged(change: RecordChange): void {
    if (change.kind === 'lost') {
      this.logger.warn({}, 'the session change feed is lost: the fast path refuses every decision token');
      if (this.revocations.setFeedLost(true)) this.changed();
    } else if (change.kind === 'resumed') {
      // Revocations made while it was down went unseen: refuse every token minted until now.
      const lifted = this.revocations.setFeedLost(false);
      const all = this.revocations.revokeAll(this.now() + SKEW_MS);
      if (lifted || all) this.changed();
    }
  }

  /** The set changed: publish soon (see the class comment), where the proxy runs. */
  private changed(): void {
    if (this.closed || this.pending !== undefined || this.options.overlay === undefined) return;
    // With the lifetime 0 there is nothing to push once the overlay is empty.
    if (this.lifetimeMs === 0 && !this.carriesFilter && this.failing.size === 0) return;
    const waitMs = this.lastPublishAt + this.coalesceMs - performance.now();
    if (waitMs <= 0) {
      // After the I/O callbacks of this turn: their invalidations join this publish.
      const immediate = setImmediate(() => this.publishNow());
      this.pending = () => clearImmediate(immediate);
    } else {
      const timer = setTimeout(() => this.publishNow(), waitMs);
      timer.unref();
      this.pending = () => clearTimeout(timer);
    }
  }

  private publishNow(): void {
    this.pending?.();
    this.pending = undefined;
    const overlay = this.options.overlay;
    if (this.closed || overlay === undefined) return;
    this.lastPublishAt = performance.now();
    this.revocations.prune();
    if (this.lifetimeMs === 0) {
      if (this.publish(overlay, new Map())) this.carriesFilter = false;
      return;
    }
    const entries = this.revocations.entries();
    const overflowed = this.revocations.overflowed();
    let resource: EncodedResource;
    try {
      resource = this.encoded(entries, overflowed);
    } catch (err) {
      this.failed(err, 'compiling the fast-path revocations failed: refusing every decision token');
      try {
        resource = this.encoded([], true);
      } catch (again) {
        this.failed(again, 'compiling the fast path filter failed: Envoy keeps the last one pushed');
        return;
      }
      if (this.publish(overlay, new Map([[FAST_PATH_FILTER, resource]]), false)) this.carriesFilter = true;
      return;
    }
    if (this.publish(overlay, new Map([[FAST_PATH_FILTER, resource]]))) this.carriesFilter = true;
  }

  /**
   * Hands `resources` to the overlay; true when it took them. A success ends a failing spell unless
   * `recovered` is false.
   */
  private publish(
    overlay: NonNullable<RevocationFeedOptions['overlay']>,
    resources: ReadonlyMap<string, EncodedResource>,
    recovered = true,
  ): boolean {
    try {
      overlay(resources);
    } catch (err) {
      this.failed(err, 'publishing the fast-path revocations failed: Envoy keeps the last one pushed');
      return false;
    }
    if (recovered && this.failing.size > 0) {
      this.failing.clear();
      this.logger.info({}, 'the fast-path revocations compile and publish again');
    }
    return true;
  }

  /** The ECDS resource of `entries`; throws when compile does, or names another resource. */
  private encoded(entries: readonly DecisionRevocation[], overflowed: boolean): EncodedResource {
    const message = this.compile(entries, overflowed);
    if (message.name !== FAST_PATH_FILTER) {
      throw new Error(`the compiled filter is named ${String(message.name)}, not ${FAST_PATH_FILTER}`);
    }
    const bytes = encodeMessage(TYPED_EXTENSION_CONFIG_TYPE, message);
    return { name: FAST_PATH_FILTER, version: shortHash(bytes), bytes };
  }

  /** Logs each distinct failure once per failing spell (a spell ends with a good publish). */
  private failed(err: unknown, what: string): void {
    const message = `${what}: ${errorMessage(err)}`;
    if (this.failing.has(message) || this.failing.size >= MAX_FAILURES_LOGGED) return;
    this.logger.error({ err: errorMessage(err) }, what);
    this.failing.add(message);
  }

  private warnBlind(): void {
    if (this.lifetimeMs === 0) return;
    this.logger.warn(
      {},
      'no session store in this process, so revocations cannot be seen: the fast path refuses every decision token here (set databroker_service_url to let this proxy replay decisions)',
    );
  }
}

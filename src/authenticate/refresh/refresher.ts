/**
 * Keeps signed-in sessions' tokens fresh with the refresh-token grant, off the request path: the
 * authorize hot path never calls the IdP. A session the IdP refuses to refresh ends (a user
 * removed at the IdP loses access within one token lifetime); one whose IdP or session store is
 * down is kept and retried with capped, jittered backoff until it works or the session expires
 * (a store outage never ends a session). With several instances on one store, a lease in the
 * store lets one instance at a time refresh a session; the others follow the store's change feed.
 */
import { StoreUnavailableError, type RecordBackend } from '../../session/records.js';
import type { Session, SessionStore } from '../../session/session.js';
import type { Logger } from '../../shared/logger.js';
import { NO_TELEMETRY, type Telemetry } from '../../contract/telemetry.js';
import { openTokens } from '../../session/session-tokens.js';
import { IdpError } from '../types.js';
import type { ProviderClient, RefreshResult } from '../types.js';
import { refreshedSession } from './refreshed-session.js';
import { leaseBusyDelay, nextRefreshAt, retryDelay } from './schedule.js';

/** A timer as the injected clock returns it; `unref` is called when present. */
export interface TimerHandle {
  unref?(): unknown;
}

/** setTimeout/clearTimeout, injectable so tests drive the refresher with a fake clock. */
export interface Timers {
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** What a refresh did: new tokens, the session ended (refused, gone, unusable), or kept as it was. */
export type RefreshOutcome = 'refreshed' | 'ended' | 'kept';

/**
 * The store's named leases, as the refresher takes them: a RecordBackend (the shared store's
 * backend) is one as it is.
 */
export type RefreshLease = Pick<RecordBackend, 'acquireLease' | 'releaseLease'>;

/** Default refresh lease: longer than one IdP call (its 10 s deadline) and the store writes around it. */
export const REFRESH_LEASE_TTL_MS = 30_000;

/** What the refresher needs; `timers` and `random` default to Node's and Math.random. */
export interface RefresherOptions {
  readonly sessions: SessionStore;
  readonly provider: (idpId: string) => ProviderClient | undefined;
  readonly sharedSecret: () => Uint8Array;
  readonly now: () => number;
  readonly logger: Logger;
  readonly timers?: Timers;
  /** In [0, 1): the jitter of retry delays. */
  readonly random?: () => number;
  /**
   * The shared store's lease `refresh:<session id>`, held around each refresh so one instance at
   * a time asks the IdP. Unset: this process is the only refresher (the memory store).
   */
  readonly lease?: RefreshLease;
  /** How long a refresh lease lasts (REFRESH_LEASE_TTL_MS). */
  readonly leaseTtlMs?: number;
  /** Where each refresh's outcome is counted (metrics); default NO_TELEMETRY. */
  readonly telemetry?: Telemetry;
}

/** Longest delay setTimeout takes (about 24.8 days); a longer wait re-arms when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const NODE_TIMERS: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

interface Tracked {
  timer: TimerHandle | undefined;
  /** When tokens were last obtained (sign-in or refresh). */
  lastRefreshAt: number;
  /** Consecutive unavailable answers (0 after a success). */
  failures: number;
  /** The session's hard end: retries are scheduled before it without reading the store. */
  readonly expiresAt: number;
  /** The sealed tokens this instance last saw; others in the store mean another instance refreshed. */
  readonly sealed: string | undefined;
  /**
   * A refreshed session the store could not take (outage): written on the next try instead of
   * asking the IdP again, whose refresh token may have rotated.
   */
  pending: Session | undefined;
}

/** A fresh entry for `session`. */
function entryFor(session: Session, previous?: Tracked): Tracked {
  return {
    timer: undefined,
    lastRefreshAt: previous?.lastRefreshAt ?? session.issuedAt,
    failures: previous?.failures ?? 0,
    expiresAt: session.expiresAt,
    sealed: session.tokens?.sealed,
    pending: undefined,
  };
}

/**
 * Schedules and performs refreshes. `track(session)` after sign-in (and for sessions found at
 * start); `refresh(id)` on demand; `close()` on shutdown. State is per instance: timers by session
 * id and the in-flight refresh of each session (single flight).
 */
export class SessionRefresher {
  private readonly tracked = new Map<string, Tracked>();
  private readonly inflight = new Map<string, Promise<RefreshOutcome>>();
  private readonly timers: Timers;
  private readonly random: () => number;
  private readonly unsubscribe: () => void;
  private closed = false;

  constructor(private readonly options: RefresherOptions) {
    this.timers = options.timers ?? NODE_TIMERS;
    this.random = options.random ?? Math.random;
    this.unsubscribe = options.sessions.onInvalidate((id) => this.invalidated(id));
  }

  /**
   * Schedules `session`'s next refresh (see schedule.ts nextRefreshAt), replacing any timer it
   * had. Sessions without a refresh token, or whose tokens outlive them, are not tracked.
   */
  track(session: Session): void {
    if (this.closed) return;
    const previous = this.tracked.get(session.id);
    this.clearTimer(previous);
    const entry = entryFor(session, previous);
    const due =
      session.tokens?.refreshable === true
        ? nextRefreshAt({
            accessTokenExpiresAt: session.tokens.accessTokenExpiresAt,
            idTokenExpiresAt: session.tokens.idTokenExpiresAt,
            lastRefreshAt: entry.lastRefreshAt,
            expiresAt: session.expiresAt,
          })
        : undefined;
    if (due === undefined) {
      this.tracked.delete(session.id);
      return;
    }
    this.tracked.set(session.id, entry);
    this.arm(session.id, entry, due);
  }

  /** Whether a refresh of `sessionId` is scheduled (for tests and diagnostics). */
  isTracked(sessionId: string): boolean {
    return this.tracked.get(sessionId)?.timer !== undefined;
  }

  /** Number of sessions with a scheduled refresh. */
  get size(): number {
    return this.tracked.size;
  }

  /**
   * Refreshes `sessionId` now. Single flight: concurrent callers share one IdP call and one
   * outcome. 'kept' also when another instance holds the session's lease (retried shortly) or the
   * store is unavailable (retried with backoff). Never throws.
   */
  refresh(sessionId: string): Promise<RefreshOutcome> {
    const running = this.inflight.get(sessionId);
    if (running !== undefined) return running;
    const started = this.perform(sessionId)
      .catch((err: unknown) => {
        if (err instanceof StoreUnavailableError) {
          this.options.logger.warn(
            { component: 'refresher', code: err.code, err: err.message },
            'session store unavailable during refresh; session kept, will retry',
          );
          this.retryLater(sessionId);
          return 'kept' as const;
        }
        // A sealing failure or a bug: logged; the session stays as it is until tracked again.
        this.options.logger.error({ err: errorText(err) }, 'session refresh failed');
        return this.untrack(sessionId, 'kept');
      })
      .then((outcome) => {
        (this.options.telemetry ?? NO_TELEMETRY).refresh(outcome);
        return outcome;
      })
      .finally(() => this.inflight.delete(sessionId));
    this.inflight.set(sessionId, started);
    return started;
  }

  /** Clears every timer and stops listening to the store; in-flight refreshes finish unscheduled. */
  close(): void {
    this.closed = true;
    this.unsubscribe();
    for (const entry of this.tracked.values()) this.clearTimer(entry);
    this.tracked.clear();
  }

  /**
   * One refresh under the session's lease: another holder means another instance is refreshing
   * (try again shortly; its write reschedules this one through the feed). Store errors reject.
   */
  private async perform(sessionId: string): Promise<RefreshOutcome> {
    const { lease } = this.options;
    if (lease === undefined) return this.performLeased(sessionId);
    const name = `refresh:${sessionId}`;
    const token = await lease.acquireLease(name, this.options.leaseTtlMs ?? REFRESH_LEASE_TTL_MS);
    if (token === undefined) {
      this.later(sessionId, leaseBusyDelay(this.random()));
      return 'kept';
    }
    try {
      return await this.performLeased(sessionId);
    } finally {
      // A lease not released ends by itself after its TTL.
      await lease.releaseLease(name, token).catch((err: unknown) => {
        this.options.logger.debug({ err: errorText(err) }, 'refresh lease not released');
      });
    }
  }

  /**
   * The refresh itself, from the session as the store holds it now: tokens another instance has
   * renewed since this one scheduled are just rescheduled, and a refreshed session the store
   * could not take before is written without asking the IdP again.
   */
  private async performLeased(sessionId: string): Promise<RefreshOutcome> {
    const { sessions, logger } = this.options;
    const log = logger.child({ component: 'refresher' });
    const session = await sessions.get(sessionId);
    if (session === undefined) return this.untrack(sessionId, 'ended');
    if (session.tokens === undefined || !session.tokens.refreshable) return this.untrack(sessionId, 'kept');
    const entry = this.tracked.get(sessionId);
    if (entry?.sealed !== undefined && entry.sealed !== session.tokens.sealed) {
      this.track(session);
      return 'refreshed';
    }
    if (entry?.pending !== undefined) return this.store(session, entry.pending);
    const secret = this.options.sharedSecret();
    const tokens = await openTokens(secret, session.id, session.tokens).catch(() => undefined);
    if (tokens?.refreshToken === undefined) {
      log.warn(
        { userId: session.userId, idpId: session.idpId },
        'session tokens do not open; ending the session',
      );
      return this.end(session, 'ended');
    }
    const provider = this.options.provider(session.idpId);
    let result: RefreshResult;
    try {
      if (provider === undefined) throw new IdpError('unavailable', `no identity provider ${session.idpId}`);
      result = await provider.refresh(tokens.refreshToken);
    } catch (err) {
      if (err instanceof IdpError && err.kind === 'refused') {
        log.info(
          { userId: session.userId, idpId: session.idpId, reason: err.message },
          'refresh refused; session ended',
        );
        return this.end(session, 'ended');
      }
      log.warn(
        { userId: session.userId, idpId: session.idpId, err: errorText(err) },
        'refresh failed; will retry',
      );
      this.retryLater(sessionId, session);
      return 'kept';
    }
    return this.store(session, await refreshedSession(session, tokens, result, secret));
  }

  /**
   * Writes `refreshed` over `session` unless it was signed out meanwhile (never brought back). A
   * store outage keeps `refreshed` pending for the next try and rejects.
   */
  private async store(session: Session, refreshed: Session): Promise<RefreshOutcome> {
    const { sessions } = this.options;
    try {
      if ((await sessions.get(session.id)) === undefined) return this.untrack(session.id, 'ended');
      await sessions.put(refreshed);
    } catch (err) {
      if (err instanceof StoreUnavailableError) {
        const entry = this.tracked.get(session.id) ?? entryFor(session);
        entry.pending = refreshed;
        this.tracked.set(session.id, entry);
      }
      throw err;
    }
    const entry = this.tracked.get(session.id);
    if (entry !== undefined) {
      entry.lastRefreshAt = this.options.now();
      entry.failures = 0;
    }
    this.options.logger.debug(
      { component: 'refresher', userId: session.userId, idpId: session.idpId },
      'session refreshed',
    );
    this.track(refreshed);
    return 'refreshed';
  }

  /**
   * Schedules the next try after an unavailable IdP or store (capped, jittered backoff), before
   * the session's end. Needs the session's entry, or `session` to make one; else nothing is
   * scheduled (an on-demand refresh of an untracked session).
   */
  private retryLater(sessionId: string, session?: Session): void {
    if (this.closed) return;
    const entry = this.tracked.get(sessionId) ?? (session === undefined ? undefined : entryFor(session));
    if (entry === undefined) return;
    const due = this.options.now() + retryDelay(entry.failures, this.random());
    entry.failures += 1;
    this.rearm(sessionId, entry, due);
  }

  /** Tries a tracked session again in `delayMs` (not a failure: the lease was taken elsewhere). */
  private later(sessionId: string, delayMs: number): void {
    const entry = this.tracked.get(sessionId);
    if (this.closed || entry === undefined) return;
    this.rearm(sessionId, entry, this.options.now() + delayMs);
  }

  /** Replaces `entry`'s timer with one at `due`, or forgets the session when that is past its end. */
  private rearm(sessionId: string, entry: Tracked, due: number): void {
    this.clearTimer(entry);
    if (due >= entry.expiresAt) {
      this.tracked.delete(sessionId);
      return;
    }
    this.tracked.set(sessionId, entry);
    this.arm(sessionId, entry, due);
  }

  /** Sets `entry`'s timer for `due`; a wait longer than setTimeout allows re-arms on firing. */
  private arm(sessionId: string, entry: Tracked, due: number): void {
    const wait = Math.max(0, due - this.options.now());
    const timer = this.timers.setTimeout(
      () => {
        entry.timer = undefined;
        if (this.tracked.get(sessionId) !== entry) return;
        if (this.options.now() < due) this.arm(sessionId, entry, due);
        else void this.refresh(sessionId);
      },
      Math.min(wait, MAX_TIMER_MS),
    );
    timer.unref?.();
    entry.timer = timer;
  }

  /**
   * The store deleted or replaced a session: drop its timer at once, then, if it still exists
   * (replaced, e.g. refreshed elsewhere), schedule it again from what the store now holds. When
   * the store cannot be read, the session stays tracked and is tried again with backoff.
   */
  private invalidated(sessionId: string): void {
    if (!this.tracked.has(sessionId) || this.inflight.has(sessionId)) return;
    const entry = this.tracked.get(sessionId);
    this.clearTimer(entry);
    if (entry !== undefined) entry.timer = undefined;
    void this.options.sessions.get(sessionId).then(
      (session) => {
        if (this.tracked.get(sessionId) !== entry) return;
        if (session === undefined) this.tracked.delete(sessionId);
        else this.track(session);
      },
      (err: unknown) => {
        if (this.tracked.get(sessionId) !== entry) return;
        this.options.logger.debug({ err: errorText(err) }, 'changed session not read; will retry');
        this.retryLater(sessionId);
      },
    );
  }

  /** Deletes an ended session, then forgets it; a store outage rejects with it still tracked (retried). */
  private async end(session: Session, outcome: RefreshOutcome): Promise<RefreshOutcome> {
    await this.options.sessions.delete(session.id);
    return this.untrack(session.id, outcome);
  }

  private untrack(sessionId: string, outcome: RefreshOutcome): RefreshOutcome {
    this.clearTimer(this.tracked.get(sessionId));
    this.tracked.delete(sessionId);
    return outcome;
  }

  private clearTimer(entry: Tracked | undefined): void {
    if (entry?.timer !== undefined) this.timers.clearTimeout(entry.timer);
    if (entry !== undefined) entry.timer = undefined;
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Keeps signed-in sessions' tokens fresh with the refresh-token grant, off the request path: the
 * authorize hot path never calls the IdP. A session the IdP refuses to refresh ends (a user
 * removed at the IdP loses access within one token lifetime); one whose IdP is down is kept and
 * retried with capped, jittered backoff until it works or the session expires.
 */
import type { OAuthTokens, Session, SessionStore } from '../../session/session.js';
import type { Logger } from '../../shared/logger.js';
import { openTokens, sealTokens } from '../session-tokens.js';
import { IdpError } from '../types.js';
import type { ProviderClient, RefreshResult } from '../types.js';
import { nextRefreshAt, retryDelay } from './schedule.js';

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
    const lastRefreshAt = previous?.lastRefreshAt ?? session.issuedAt;
    const due =
      session.tokens?.refreshable === true
        ? nextRefreshAt({
            accessTokenExpiresAt: session.tokens.accessTokenExpiresAt,
            idTokenExpiresAt: session.tokens.idTokenExpiresAt,
            lastRefreshAt,
            expiresAt: session.expiresAt,
          })
        : undefined;
    if (due === undefined) {
      this.tracked.delete(session.id);
      return;
    }
    const entry: Tracked = { timer: undefined, lastRefreshAt, failures: previous?.failures ?? 0 };
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
   * outcome. Never throws.
   */
  refresh(sessionId: string): Promise<RefreshOutcome> {
    const running = this.inflight.get(sessionId);
    if (running !== undefined) return running;
    const started = this.perform(sessionId)
      .catch((err: unknown) => {
        // A store or sealing failure: logged; the session stays as it is until tracked again.
        this.options.logger.error({ err: errorText(err) }, 'session refresh failed');
        return this.untrack(sessionId, 'kept');
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

  private async perform(sessionId: string): Promise<RefreshOutcome> {
    const { sessions, logger } = this.options;
    const log = logger.child({ component: 'refresher' });
    const session = await sessions.get(sessionId).catch(() => undefined);
    if (session === undefined) return this.untrack(sessionId, 'ended');
    if (session.tokens === undefined || !session.tokens.refreshable) return this.untrack(sessionId, 'kept');
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
      this.retry(session);
      return 'kept';
    }
    const refreshed = await this.refreshedSession(session, tokens, result, secret);
    // Signed out while the IdP answered: do not bring the session back.
    if ((await sessions.get(sessionId).catch(() => undefined)) === undefined)
      return this.untrack(sessionId, 'ended');
    const entry = this.tracked.get(sessionId);
    this.tracked.set(sessionId, { timer: entry?.timer, lastRefreshAt: this.options.now(), failures: 0 });
    await sessions.put(refreshed);
    log.debug({ userId: session.userId, idpId: session.idpId }, 'session refreshed');
    this.track(refreshed);
    return 'refreshed';
  }

  /**
   * The session after a refresh: new tokens sealed (the old refresh and ID tokens kept when the
   * IdP returned none), the new claims merged over the old (email, name and groups follow them),
   * expiresAt unchanged. An ID token kept from before has already expired, so its expiry no
   * longer drives the schedule.
   */
  private async refreshedSession(
    session: Session,
    old: OAuthTokens,
    result: RefreshResult,
    secret: Uint8Array,
  ): Promise<Session> {
    const tokens = await sealTokens(secret, session.id, {
      ...result,
      accessToken: result.accessToken ?? old.accessToken,
      refreshToken: result.refreshToken ?? old.refreshToken,
      idToken: result.idToken ?? old.idToken,
      idTokenExpiresAt: result.idToken === undefined ? undefined : result.idTokenExpiresAt,
    });
    const claims = { ...session.claims, ...result.claims };
    const text = (value: unknown, fallback: string | undefined): string | undefined =>
      typeof value === 'string' ? value : fallback;
    const groups = Array.isArray(claims.groups)
      ? claims.groups.filter((group): group is string => typeof group === 'string')
      : session.groups;
    return {
      ...session,
      email: text(claims.email, session.email),
      name: text(claims.name, session.name),
      groups,
      claims,
      tokens,
    };
  }

  /** Schedules the next try after an unavailable IdP (capped, jittered backoff), before expiry. */
  private retry(session: Session): void {
    if (this.closed) return;
    const entry = this.tracked.get(session.id) ?? {
      timer: undefined,
      lastRefreshAt: session.issuedAt,
      failures: 0,
    };
    this.clearTimer(entry);
    const due = this.options.now() + retryDelay(entry.failures, this.random());
    entry.failures += 1;
    if (due >= session.expiresAt) {
      this.tracked.delete(session.id);
      return;
    }
    this.tracked.set(session.id, entry);
    this.arm(session.id, entry, due);
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
   * (replaced, e.g. refreshed elsewhere), schedule it again from what the store now holds.
   */
  private invalidated(sessionId: string): void {
    if (!this.tracked.has(sessionId) || this.inflight.has(sessionId)) return;
    const entry = this.tracked.get(sessionId);
    this.clearTimer(entry);
    if (entry !== undefined) entry.timer = undefined;
    void this.options.sessions
      .get(sessionId)
      .catch(() => undefined)
      .then((session) => {
        if (this.tracked.get(sessionId) !== entry) return;
        if (session === undefined) this.tracked.delete(sessionId);
        else this.track(session);
      });
  }

  private async end(session: Session, outcome: RefreshOutcome): Promise<RefreshOutcome> {
    this.untrack(session.id, outcome);
    await this.options.sessions.delete(session.id).catch((err: unknown) => {
      this.options.logger.error({ err: errorText(err) }, 'could not delete an ended session');
    });
    return outcome;
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

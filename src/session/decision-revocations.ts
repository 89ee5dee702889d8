/**
 * One revoked session of the fast path: Envoy refuses the decision tokens of `sid` (a decision
 * session id, contract/fast-path.ts `decisionSessionId`) minted at or before `notBeforeMs`. The
 * same shape as contract/fast-path.ts `DecisionRevocation`, which compile takes: session and
 * contract are peers of the foundation layer and import neither each other, and the typecheck
 * proves the two agree where the feed hands one to the other.
 */
export interface RevokedSession {
  readonly sid: string;
  readonly notBeforeMs: number;
}

/** Options of `DecisionRevocations`. */
export interface DecisionRevocationsOptions {
  /** The decision tokens' lifetime (`decision_token_lifetime`, ms; 0: the fast path is off). */
  readonly lifetimeMs: number;
  /** The clock skew Envoy allows on a token's `exp` (ms), which every hold adds. */
  readonly skewMs: number;
  /** Most entries kept; a revocation past it overflows the set (see `overflowed`). */
  readonly maxEntries: number;
  /** Unix ms. */
  readonly now: () => number;
}

/** A longer lifetime a reload replaced, and until when tokens minted under it may still be honoured. */
interface EarlierLifetime {
  readonly lifetimeMs: number;
  readonly untilMs: number;
}

/**
 * The sessions whose decision tokens Envoy must no longer honour (signed out, deleted, expired,
 * refused or changed at refresh: every session the store invalidates), each with the time up to
 * which its tokens are refused. It is pushed to every Envoy whole, so it holds only what can still
 * matter: an entry goes once every token it refuses has expired, i.e. `notBeforeMs` + the token
 * lifetime + the skew. When a reload shortens the lifetime, the longer one keeps counting until
 * the tokens minted under it have expired too.
 *
 * It never forgets a revocation. A revocation that finds `maxEntries` taken overflows the set:
 * `overflowed()` turns true and the compiled filter then refuses every token (every request asks
 * Portcullis) until that revocation has aged out as an entry would have. `revokeAll` does the same
 * on purpose (the change feed came back and may have missed changes), and `setFeedLost(true)`
 * keeps it overflowed for as long as revocations cannot be seen at all. `entries()` is sorted by
 * sid, so equal sets compile to equal resources. One per process: it is state, not a cache.
 */
export class DecisionRevocations {
  /** Decision session id -> the latest notBeforeMs it was revoked with. */
  private readonly notBefore = new Map<string, number>();
  /**
   * At most the earliest notBeforeMs held, so `prune` looks at the entries only once one may have
   * expired: a burst of revocations (every cached session, when the change feed resumes) stays
   * linear however full the set is.
   */
  private earliestNotBeforeMs = Number.POSITIVE_INFINITY;
  private lifetimeMs: number;
  private earlier: EarlierLifetime | undefined;
  /** The latest notBeforeMs of a revocation the set could not keep (or of `revokeAll`). */
  private overflowNotBeforeMs: number | undefined;
  private feedLost = false;

  constructor(private readonly options: DecisionRevocationsOptions) {
    this.lifetimeMs = options.lifetimeMs;
  }

  /**
   * Refuses the tokens of `sid` minted at or before `notBeforeMs` (a repeat keeps the later time).
   * True when the entries or the overflow changed, i.e. the compiled filter must be pushed again.
   */
  revoke(sid: string, notBeforeMs: number): boolean {
    const pruned = this.prune();
    const known = this.notBefore.get(sid);
    if (known !== undefined) {
      if (notBeforeMs <= known) return pruned;
      this.notBefore.set(sid, notBeforeMs);
      return true;
    }
    if (this.notBefore.size < this.options.maxEntries) {
      this.notBefore.set(sid, notBeforeMs);
      this.earliestNotBeforeMs = Math.min(this.earliestNotBeforeMs, notBeforeMs);
      return true;
    }
    return this.revokeAll(notBeforeMs) || pruned;
  }

  /**
   * Refuses every token minted at or before `notBeforeMs`, whatever its session: the set overflows
   * until such tokens have expired. True when the set was not overflowed before.
   */
  revokeAll(notBeforeMs: number): boolean {
    const was = this.overflowed();
    this.overflowNotBeforeMs = Math.max(this.overflowNotBeforeMs ?? notBeforeMs, notBeforeMs);
    return !was;
  }

  /**
   * While `lost` (the session change feed is down: revocations happen unseen) the set stays
   * overflowed. On the way back the caller should `revokeAll` up to now plus the skew: what was
   * revoked meanwhile is unknown. True when `overflowed()` changed.
   */
  setFeedLost(lost: boolean): boolean {
    const was = this.overflowed();
    this.feedLost = lost;
    this.prune();
    return was !== this.overflowed();
  }

  /**
   * Follows a reload's `decision_token_lifetime`. A shorter one (0 included) does not shorten the
   * holds until every token minted under the longer one has expired. True when entries went.
   */
  setLifetime(lifetimeMs: number): boolean {
    const now = this.options.now();
    if (lifetimeMs < this.lifetimeMs) {
      const active = this.activeEarlier(now);
      // A token minted just before now, by a clock up to one skew ahead, is honoured until then.
      const untilMs = now + this.lifetimeMs + 2 * this.options.skewMs;
      this.earlier = {
        lifetimeMs: Math.max(this.lifetimeMs, active?.lifetimeMs ?? 0),
        untilMs: Math.max(untilMs, active?.untilMs ?? 0),
      };
    }
    this.lifetimeMs = lifetimeMs;
    return this.prune();
  }

  /** Drops the entries (and ends the overflow) whose tokens have all expired; true when any went. */
  prune(): boolean {
    const now = this.options.now();
    let changed = false;
    if (this.expired(this.earliestNotBeforeMs, now)) {
      let earliest = Number.POSITIVE_INFINITY;
      for (const [sid, notBeforeMs] of this.notBefore) {
        if (this.expired(notBeforeMs, now)) {
          this.notBefore.delete(sid);
          changed = true;
        } else {
          earliest = Math.min(earliest, notBeforeMs);
        }
      }
      this.earliestNotBeforeMs = earliest;
    }
    if (this.overflowNotBeforeMs !== undefined && this.expired(this.overflowNotBeforeMs, now)) {
      const was = this.overflowed();
      this.overflowNotBeforeMs = undefined;
      changed ||= was !== this.overflowed();
    }
    return changed;
  }

  /** True while every token must be refused: revocations overflowed the set, or cannot be seen. */
  overflowed(): boolean {
    return this.feedLost || this.overflowNotBeforeMs !== undefined;
  }

  /** The revoked sessions, sorted by sid (as of the last prune: the caller prunes before compiling). */
  entries(): RevokedSession[] {
    return [...this.notBefore]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([sid, notBeforeMs]) => ({ sid, notBeforeMs }));
  }

  /** How many sessions are held (the overflow not counted). */
  get size(): number {
    return this.notBefore.size;
  }

  /**
   * Up to when tokens of `sid` are refused (Unix ms), or undefined when none is: authorize mints
   * no token for `sid` until then, as Envoy would refuse it. An overflow counts for every session
   * (which ones overflowed is not known); while the feed is lost it is +Infinity.
   */
  revokedUntil(sid: string): number | undefined {
    if (this.feedLost) return Number.POSITIVE_INFINITY;
    const now = this.options.now();
    const live = (notBeforeMs: number | undefined): number | undefined =>
      notBeforeMs === undefined || this.expired(notBeforeMs, now) ? undefined : notBeforeMs;
    const own = live(this.notBefore.get(sid));
    const all = live(this.overflowNotBeforeMs);
    return own === undefined ? all : all === undefined ? own : Math.max(own, all);
  }

  /** Whether every token minted at or before `notBeforeMs` has expired (and its skew passed) by `now`. */
  private expired(notBeforeMs: number, now: number): boolean {
    const lifetimeMs = Math.max(this.lifetimeMs, this.activeEarlier(now)?.lifetimeMs ?? 0);
    return now >= notBeforeMs + lifetimeMs + this.options.skewMs;
  }

  private activeEarlier(now: number): EarlierLifetime | undefined {
    return this.earlier !== undefined && now < this.earlier.untilMs ? this.earlier : undefined;
  }
}

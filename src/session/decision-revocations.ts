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
  /** Most entries kept; a revocation that finds them taken raises the floor instead (`raiseFloor`). */
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
 * Beside the entries it keeps a **floor**: every token minted at or before `floorMs`, whatever its
 * session, is refused. Tokens minted later pass it, so unlike refusing everything it costs the
 * fast path nothing once the sessions' next tokens are minted. It only rises (`raiseFloor`), and
 * an entry at or below it is dropped (the floor covers it), so every entry is above the floor. It
 * never forgets a revocation: one that finds `maxEntries` taken raises the floor to its
 * `notBeforeMs` instead, which covers it and drops every entry revoked before it. The caller
 * raises it at start (tokens minted before the process could not be seen being revoked) and when
 * the change feed comes back (changes may have been missed). The floor needs no expiry, as it
 * never refuses a token minted after it; but once every token minted at or before it has expired
 * (floor + lifetime + skew) it refuses nothing that Envoy would still accept, so `activeFloorMs`
 * leaves it out from then on (the next prune), and the compiled resource is again what the entries
 * alone give.
 *
 * `setFeedLost(true)` refuses every token (`refusesAll`) for as long as revocations cannot be seen
 * at all. `entries()` is sorted by sid, so equal sets compile to equal resources. One per process:
 * it is state, not a cache.
 */
export class DecisionRevocations {
  /** Decision session id -> the latest notBeforeMs it was revoked with (always above the floor). */
  private readonly notBefore = new Map<string, number>();
  /**
   * At most the earliest notBeforeMs held, so `prune` and `raiseFloor` look at the entries only
   * once one may go: a burst of revocations stays linear however full the set is.
   */
  private earliestNotBeforeMs = Number.POSITIVE_INFINITY;
  private lifetimeMs: number;
  private earlier: EarlierLifetime | undefined;
  private floor: number | undefined;
  /** Whether the floor may still refuse a token Envoy accepts (as of the last prune or raise). */
  private floorActive = false;
  private feedLost = false;

  constructor(private readonly options: DecisionRevocationsOptions) {
    this.lifetimeMs = options.lifetimeMs;
  }

  /**
   * Tokens minted at or before it (Unix ms) are refused, whatever their session; undefined until
   * first raised. It only rises.
   */
  get floorMs(): number | undefined {
    return this.floor;
  }

  /**
   * Refuses the tokens of `sid` minted at or before `notBeforeMs` (a repeat keeps the later time;
   * one at or below the floor is covered already). A set that is full raises the floor to
   * `notBeforeMs` instead. True when the entries or the floor changed, i.e. the compiled filter
   * must be pushed again.
   */
  revoke(sid: string, notBeforeMs: number): boolean {
    const pruned = this.prune();
    // Covered: by the floor while it is active, and once it is not, such tokens have all expired.
    if (this.floor !== undefined && notBeforeMs <= this.floor) return pruned;
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
    return this.raiseFloor(notBeforeMs) || pruned;
  }

  /**
   * Refuses every token minted at or before `floorMs`, whatever its session, and drops the entries
   * it covers (`notBeforeMs` at or below it). A lower floor than the current one changes nothing.
   * True when the floor or the entries changed.
   */
  raiseFloor(floorMs: number): boolean {
    const pruned = this.prune();
    if (this.floor !== undefined && floorMs <= this.floor) return pruned;
    const wasActive = this.floorActive;
    this.floor = floorMs;
    this.floorActive = !this.expired(floorMs, this.options.now());
    let dropped = false;
    if (this.earliestNotBeforeMs <= floorMs) {
      let earliest = Number.POSITIVE_INFINITY;
      for (const [sid, notBeforeMs] of this.notBefore) {
        if (notBeforeMs <= floorMs) {
          this.notBefore.delete(sid);
          dropped = true;
        } else {
          earliest = Math.min(earliest, notBeforeMs);
        }
      }
      this.earliestNotBeforeMs = earliest;
    }
    return pruned || dropped || wasActive || this.floorActive;
  }

  /**
   * While `lost` (the session change feed is down: revocations happen unseen) every token is
   * refused (`refusesAll`). On the way back the caller should `raiseFloor` to now plus the margin:
   * what was revoked meanwhile is unknown. True when `refusesAll()` changed.
   */
  setFeedLost(lost: boolean): boolean {
    const was = this.feedLost;
    this.feedLost = lost;
    return was !== lost;
  }

  /**
   * Follows a reload's `decision_token_lifetime`. A shorter one (0 included) does not shorten the
   * holds until every token minted under the longer one has expired. True when entries (or the
   * floor) went.
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

  /**
   * Drops the entries whose tokens have all expired, and retires the floor once the tokens it
   * refuses have (see `activeFloorMs`); true when anything went.
   */
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
    if (this.floorActive && this.floor !== undefined && this.expired(this.floor, now)) {
      this.floorActive = false;
      changed = true;
    }
    return changed;
  }

  /**
   * True while every token must be refused: the change feed is lost (or there is none), so
   * revocations cannot be seen. A full set never comes to this: it raises the floor.
   */
  refusesAll(): boolean {
    return this.feedLost;
  }

  /**
   * The floor as the compiled filter carries it (as of the last prune): undefined once every token
   * minted at or before it has expired, as nothing Envoy accepts is left for it to refuse; the
   * resource then goes back to what the entries alone give, not changing again until the next raise.
   */
  activeFloorMs(): number | undefined {
    return this.floorActive ? this.floor : undefined;
  }

  /** The revoked sessions, sorted by sid (as of the last prune: the caller prunes before compiling). */
  entries(): RevokedSession[] {
    return [...this.notBefore]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([sid, notBeforeMs]) => ({ sid, notBeforeMs }));
  }

  /** How many sessions are held (the floor not counted). */
  get size(): number {
    return this.notBefore.size;
  }

  /**
   * Up to when tokens of `sid` are refused (Unix ms), or undefined when none is: authorize mints
   * no token for `sid` until then, as Envoy would refuse it. The later of its own entry and the
   * floor, each while some token it refuses may still be honoured; +Infinity while the feed is lost.
   */
  revokedUntil(sid: string): number | undefined {
    if (this.feedLost) return Number.POSITIVE_INFINITY;
    const now = this.options.now();
    const live = (notBeforeMs: number | undefined): number | undefined =>
      notBeforeMs === undefined || this.expired(notBeforeMs, now) ? undefined : notBeforeMs;
    const own = live(this.notBefore.get(sid));
    const floor = live(this.floor);
    return own === undefined ? floor : floor === undefined ? own : Math.max(own, floor);
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

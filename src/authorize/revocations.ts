/** Options of `Revocations`. */
export interface RevocationOptions {
  /**
   * How long an entry is kept: the decision tokens' lifetime plus the clock skew Envoy allows, after
   * which every token the session held has expired anyway.
   */
  readonly holdMs: number;
  /** Most entries kept; past it the set overflows (see `overflowed`). */
  readonly maxEntries: number;
  readonly now: () => number;
}

/**
 * The sessions whose decision tokens Envoy must no longer honour: signed out, deleted, expired,
 * refused at refresh, or whose claims changed. Each entry lives `holdMs`, so the set holds only the
 * revocations of one token lifetime and stays small; it is pushed to every Envoy whole, sorted, so
 * equal sets are equal resources. Should more sessions be revoked within one lifetime than
 * `maxEntries`, the set overflows and says so: the caller then turns the fast path off (every
 * request asks Portcullis) until the entries age out, rather than forget a revocation. The caller
 * holds one per process; it is state, not a cache.
 */
export class Revocations {
  /** Session id -> when it was revoked (ms), oldest first. */
  private readonly revokedAt = new Map<string, number>();
  private overflowUntil: number | undefined;

  constructor(private readonly options: RevocationOptions) {}

  /** Adds `sessionId`; true when the set changed (a new entry, or an overflow began). */
  revoke(sessionId: string): boolean {
    this.prune();
    const now = this.options.now();
    if (this.revokedAt.has(sessionId)) return false;
    if (this.revokedAt.size >= this.options.maxEntries) {
      const changed = this.overflowUntil === undefined;
      this.overflowUntil = now + this.options.holdMs;
      return changed;
    }
    this.revokedAt.set(sessionId, now);
    return true;
  }

  /** Drops the entries (and the overflow) older than `holdMs`; true when anything went. */
  prune(): boolean {
    const now = this.options.now();
    let changed = false;
    for (const [id, at] of this.revokedAt) {
      if (now - at < this.options.holdMs) break;
      this.revokedAt.delete(id);
      changed = true;
    }
    if (this.overflowUntil !== undefined && now >= this.overflowUntil) {
      this.overflowUntil = undefined;
      changed = true;
    }
    return changed;
  }

  /** True while more sessions were revoked within one hold than the set keeps: honour no token. */
  overflowed(): boolean {
    return this.overflowUntil !== undefined;
  }

  /** The revoked session ids, sorted. */
  ids(): string[] {
    return [...this.revokedAt.keys()].sort();
  }
}

import type { ReplayGuard } from '../http/types.js';

/** Default bound on remembered ids (about 100 bytes each). */
const DEFAULT_MAX_ENTRIES = 100_000;

/**
 * The in-process ReplayGuard: each id is accepted once until its expiry. Entries are dropped once
 * expired (checked from the oldest on every claim) and the map never holds more than `maxEntries`:
 * when full, the oldest entry is forgotten early. That only shortens its own protection window,
 * which for a sign-in state is also bounded by the IdP's single-use code and for a handoff by its
 * 60 s lifetime. One instance per process; with several replicas, a shared store would be needed
 * for cross-replica single use.
 */
export class MemoryReplayGuard implements ReplayGuard {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly now: () => number,
    private readonly maxEntries = DEFAULT_MAX_ENTRIES,
  ) {}

  claim(id: string, expiresAt: number): boolean {
    const now = this.now();
    this.dropExpired(now);
    const known = this.seen.get(id);
    if (known !== undefined && known > now) return false;
    if (expiresAt <= now) return false;
    this.seen.delete(id);
    this.seen.set(id, expiresAt);
    while (this.seen.size > this.maxEntries) {
      const oldest = this.seen.keys().next();
      if (oldest.done === true) break;
      this.seen.delete(oldest.value);
    }
    return true;
  }

  /** How many live ids are remembered (for tests and metrics). */
  get size(): number {
    this.dropExpired(this.now());
    return this.seen.size;
  }

  /** Drops expired entries from the oldest inserted until one is still live. */
  private dropExpired(now: number): void {
    for (const [id, expiresAt] of this.seen) {
      if (expiresAt > now) return;
      this.seen.delete(id);
    }
  }
}

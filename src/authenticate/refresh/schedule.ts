/**
 * When the refresher acts, as pure functions of a session's times (Unix ms), so the schedule is
 * tested without timers.
 */

/** Refresh this long before the earlier of the access and ID token expiries. */
export const REFRESH_AHEAD_MS = 60_000;
/** Never refresh a session sooner than this after its last refresh (or sign-in). */
export const MIN_REFRESH_INTERVAL_MS = 10_000;
/** First retry delay after the IdP was unavailable; doubles per attempt up to the cap. */
export const RETRY_BASE_MS = 10_000;
export const RETRY_CAP_MS = 5 * 60_000;
/**
 * Wait before trying again when another instance holds a session's refresh lease: it publishes
 * the refreshed session, whose change (the store's feed) reschedules this one before then.
 */
export const LEASE_BUSY_MS = 5_000;

/** The times the schedule depends on. */
export interface ScheduleInput {
  readonly accessTokenExpiresAt: number | undefined;
  readonly idTokenExpiresAt: number | undefined;
  /** The last refresh, or sign-in when there was none. */
  readonly lastRefreshAt: number;
  /** The session's hard end (`cookie_expire` after sign-in). */
  readonly expiresAt: number;
}

/**
 * When to refresh next: min(access expiry, ID token expiry) - REFRESH_AHEAD_MS, not sooner than
 * MIN_REFRESH_INTERVAL_MS after the last refresh (so tokens shorter-lived than the lead time do
 * not make a busy loop). Undefined when nothing expires or when that time is not before the
 * session's own end (refreshing then would keep nothing alive).
 */
export function nextRefreshAt(input: ScheduleInput): number | undefined {
  const expiries = [input.accessTokenExpiresAt, input.idTokenExpiresAt].filter(
    (time): time is number => time !== undefined,
  );
  if (expiries.length === 0) return undefined;
  const due = Math.max(
    Math.min(...expiries) - REFRESH_AHEAD_MS,
    input.lastRefreshAt + MIN_REFRESH_INTERVAL_MS,
  );
  return due < input.expiresAt ? due : undefined;
}

/**
 * The delay before retry number `attempt` (0 for the first) after the IdP was unavailable:
 * RETRY_BASE_MS doubling per attempt, capped at RETRY_CAP_MS, with "equal jitter" (half fixed,
 * half random, `random` in [0, 1)) so replicas and sessions that failed together do not retry
 * together.
 */
export function retryDelay(attempt: number, random: number): number {
  const ceiling = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling / 2 + (ceiling / 2) * random);
}

/** The delay after finding a session's refresh lease taken: LEASE_BUSY_MS with equal jitter. */
export function leaseBusyDelay(random: number): number {
  return Math.round(LEASE_BUSY_MS / 2 + (LEASE_BUSY_MS / 2) * random);
}

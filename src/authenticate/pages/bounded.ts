import { setTimeout as delay } from 'node:timers/promises';

/** The outcome of a bounded call: its value, or why there is none (an error message or the timeout). */
export type Bounded<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly reason: string };

/**
 * Waits for `promise` at most `ms` milliseconds and never throws: sign-out calls the identity
 * provider on the way out and must finish whatever the IdP does. The timer is
 * cancelled when the call settles; a late rejection is absorbed.
 */
export async function bounded<T>(promise: Promise<T>, ms: number): Promise<Bounded<T>> {
  const abort = new AbortController();
  const timedOut: Bounded<T> = { ok: false, reason: `no answer within ${ms} ms` };
  const timer = delay(ms, timedOut, { signal: abort.signal }).catch(() => timedOut);
  const settled = promise.then(
    (value): Bounded<T> => ({ ok: true, value }),
    (err: unknown): Bounded<T> => ({ ok: false, reason: err instanceof Error ? err.message : String(err) }),
  );
  try {
    return await Promise.race([settled, timer]);
  } finally {
    abort.abort();
  }
}

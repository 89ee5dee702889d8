/** Options for `waitFor`. */
export interface WaitOptions {
  /** Give up after this long. Default 10 s. */
  readonly timeoutMs?: number;
  /** Pause between probes. Default 50 ms. */
  readonly intervalMs?: number;
  /** What is being waited for, in words; it leads the timeout error (`Envoy admin to answer`). */
  readonly what: string;
}

/**
 * Calls `probe` until it returns something other than `undefined` or `false`, and returns that.
 * A probe that throws counts as "not yet". After `timeoutMs` it rejects with an error naming
 * `what`, the number of attempts and the last result or error, so a failing test says what it
 * was waiting for instead of timing out blind. Tests use this instead of bare sleeps.
 */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | false>,
  options: WaitOptions,
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  let attempts = 0;
  let last = 'no attempt finished';
  for (;;) {
    attempts += 1;
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      last = `probe returned ${String(value)}`;
    } catch (err) {
      last = `probe threw: ${err instanceof Error ? err.message : String(err)}`;
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) break;
    await new Promise((r) => setTimeout(r, Math.min(intervalMs, remaining)));
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${options.what} (${attempts} attempts; last: ${last})`,
  );
}

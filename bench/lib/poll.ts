import { request } from 'node:http';

/** Status of one GET through Envoy's listener, or 0 when the request failed. */
export function statusOf(port: number, host: string, path = '/', timeoutMs = 1000): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'GET', headers: { host }, agent: false, timeout: timeoutMs },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(0));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(0));
    req.end();
  });
}

/** Result of `pollUntil200`. */
export interface PollResult {
  /** `performance.now()` when the first 200 arrived. */
  readonly at: number;
  readonly attempts: number;
  /** Statuses seen before the 200, counted (404 = no route yet, 503 = cluster still warming). */
  readonly before: Readonly<Record<string, number>>;
}

/**
 * Sends GET requests with `host` to Envoy's listener, one after another with `intervalMs` between
 * them, until one answers 200; rejects after `timeoutMs`. Each request is a fresh connection, so
 * nothing is pooled across a config change.
 */
export async function pollUntil200(
  port: number,
  host: string,
  options: { readonly intervalMs: number; readonly timeoutMs: number },
): Promise<PollResult> {
  const deadline = performance.now() + options.timeoutMs;
  const before: Record<string, number> = {};
  let attempts = 0;
  for (;;) {
    attempts += 1;
    const status = await statusOf(port, host);
    const at = performance.now();
    if (status === 200) return { at, attempts, before };
    before[String(status)] = (before[String(status)] ?? 0) + 1;
    if (at > deadline)
      throw new Error(
        `${host} did not answer 200 within ${options.timeoutMs} ms (${JSON.stringify(before)})`,
      );
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
  }
}

/** Polls `probe` every `intervalMs` until it returns true; rejects after `timeoutMs` naming `what`. */
export async function until(
  probe: () => Promise<boolean> | boolean,
  what: string,
  options: { readonly intervalMs?: number; readonly timeoutMs: number },
): Promise<void> {
  const deadline = performance.now() + options.timeoutMs;
  for (;;) {
    try {
      if (await probe()) return;
    } catch {
      // not yet
    }
    if (performance.now() > deadline)
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50));
  }
}

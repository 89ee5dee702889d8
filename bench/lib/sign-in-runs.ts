/**
 * Real, browserless sign-ins through Portcullis for the sign-in suite: each a cookie jar that
 * follows Portcullis's redirects through Envoy and signs in at the local IdP (`completeLogin`),
 * alone or in batches, with Portcullis's own time per sign-in read from its callback's log line.
 */
import { readFileSync } from 'node:fs';
import { completeLogin } from '../../test/support/idp-login.js';
import type { TestIdp } from '../../test/support/test-idp.js';
import { until, type Started } from './processes.js';
import type { Ports } from './serving.js';
import { CookieJar, signIn, type SignInOptions } from './sign-in-client.js';
import { round, summarize } from './stats.js';

/** The callback path of Portcullis's authenticate service. */
export const CALLBACK_PATH = '/oauth2/callback';
/** The test IdP's user every sign-in uses. */
const USER = 'alice';
const PASSWORD = 'alice-password';

/** Sign-in through Envoy: `*.bench.test` goes to its listener, the IdP's URLs to `completeLogin`. */
export function browser(ports: Ports, idp: TestIdp, jar = new CookieJar()): SignInOptions {
  const idpOrigin = new URL(idp.issuer).origin;
  return {
    jar,
    isIdp: (url) => url.origin === idpOrigin,
    login: async (authorizationUrl) => (await completeLogin(authorizationUrl, USER, PASSWORD)).href,
    connect: (url) => ({
      host: '127.0.0.1',
      port: url.hostname.endsWith('.bench.test') ? ports.proxyPort : Number(url.port || 80),
    }),
    timeoutMs: 30_000,
  };
}

/** One sign-in from `start` that must end on `start` itself with a 200 from the upstream. */
export async function signInTo(
  start: URL,
  options: SignInOptions,
): Promise<{ ms: number; callbackMs: number }> {
  const began = performance.now();
  const outcome = await signIn(start, options);
  if (outcome.status !== 200 || outcome.url.href !== start.href)
    throw new Error(
      `sign-in from ${start.href} ended with ${outcome.status} at ${outcome.url.href}: ${outcome.steps.map((step) => `${step.status} ${step.url}`).join(' -> ')}`,
    );
  const callback = outcome.steps.find((step) => new URL(step.url).pathname === CALLBACK_PATH);
  return { ms: performance.now() - began, callbackMs: callback?.ms ?? NaN };
}

/**
 * Portcullis's own time per sign-in, and its time at the IdP, from its callback's `signed in` log
 * line (pino JSON): `ownMs` is the callback's handling without the IdP calls (`idpMs`: the code
 * exchange, i.e. token endpoint, JWKS and userinfo). Lines from `fromLine` on; none when the
 * product logs no such line.
 */
function callbackTimes(logFile: string, fromLine: number): { own: number[]; idp: number[]; lines: number } {
  const lines = readFileSync(logFile, 'utf8').split('\n');
  const own: number[] = [];
  const idp: number[] = [];
  for (const line of lines.slice(fromLine)) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { ownMs?: unknown; idpMs?: unknown };
      if (typeof entry.ownMs === 'number' && typeof entry.idpMs === 'number') {
        own.push(entry.ownMs);
        idp.push(entry.idpMs);
      }
    } catch {
      // not a log object
    }
  }
  return { own, idp, lines: lines.length - 1 };
}

/** One batch of sign-ins through Portcullis. */
export interface Batch {
  /** How many ran at once. */
  readonly concurrency: number;
  readonly errors: readonly string[];
  readonly wallMs: number;
  readonly signInMs: readonly number[];
  readonly callbackMs: readonly number[];
  /** From the callback's log lines (see `callbackTimes`). */
  readonly ownMs: readonly number[];
  readonly idpMs: readonly number[];
}

/**
 * `count` sign-ins through Portcullis, `concurrency` at a time, each its own browser (cookie jar)
 * to its own URL under `/<label>/` of `host`; collects each one's outcome and the callback log lines.
 */
export async function signInBatch(
  ports: Ports,
  idp: TestIdp,
  portcullis: Started,
  options: {
    /** The protected route's host: each sign-in starts at `http://<host>:<port>/<label>/<n>`. */
    readonly host: string;
    readonly label: string;
    readonly count: number;
    readonly concurrency: number;
  },
): Promise<Batch> {
  const fromLine = callbackTimes(portcullis.logFile, 0).lines;
  const settled: PromiseSettledResult<{ ms: number; callbackMs: number }>[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let user = next++; user < options.count; user = next++) {
      const start = new URL(`http://${options.host}:${ports.proxyPort}/${options.label}/${user}?n=${user}`);
      settled.push(
        await signInTo(start, browser(ports, idp)).then(
          (value) => ({ status: 'fulfilled', value }) as const,
          (reason: unknown) => ({ status: 'rejected', reason }) as const,
        ),
      );
    }
  };
  const began = performance.now();
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const wallMs = performance.now() - began;
  const done = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const errors = settled.flatMap((result) =>
    result.status === 'rejected'
      ? [result.reason instanceof Error ? result.reason.message : String(result.reason)]
      : [],
  );
  // Each completed sign-in logged its line before answering; allow the log a moment to land.
  await until(
    () => callbackTimes(portcullis.logFile, fromLine).own.length >= done.length,
    'the sign-in log lines',
    { timeoutMs: 2000 },
  ).catch(() => undefined);
  const times = callbackTimes(portcullis.logFile, fromLine);
  return {
    concurrency: options.concurrency,
    errors,
    wallMs,
    signInMs: done.map((result) => round(result.ms)),
    callbackMs: done.map((result) => round(result.callbackMs)),
    ownMs: times.own,
    idpMs: times.idp,
  };
}

/** The `fraction` percentile of `values` (nearest rank), rounded; NaN when there are none. */
export function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return round(sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] ?? NaN);
}

/** Median of `values`, or NaN when there are none. */
export function medianOrNaN(values: readonly number[]): number {
  return values.length === 0 ? NaN : summarize(values).median;
}

/** "median m ms (min, p90, max) over n sign-ins; IdP calls median i ms", or why there is none. */
export function ownTimeDetail(batches: readonly Batch[]): string {
  const own = batches.flatMap((batch) => batch.ownMs);
  if (own.length === 0)
    return 'no callback log line with ownMs and idpMs: the product did not log its sign-in timings';
  const { min, max } = summarize(own);
  const idpMs = medianOrNaN(batches.flatMap((batch) => batch.idpMs));
  return `${own.length} sign-ins, ${batches[0]?.concurrency ?? 0} at a time: min ${min}, p90 ${percentile(own, 0.9)}, max ${max} ms; the IdP calls (token, JWKS, userinfo) median ${idpMs} ms`;
}

import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Where the load generator is expected (Debian's `wrk` package). */
export const WRK = '/usr/bin/wrk';
const REPORT_SCRIPT = fileURLToPath(new URL('./wrk-report.lua', import.meta.url));
const COOKIES_SCRIPT = fileURLToPath(new URL('./wrk-cookies.lua', import.meta.url));

/** One bounded wrk run. */
export interface WrkResult {
  /** Requests completed in the run. */
  readonly requests: number;
  readonly requestsPerSecond: number;
  /** Latency percentiles over all requests, in microseconds. */
  readonly p50Us: number;
  readonly p99Us: number;
  /** Socket errors and 4xx/5xx answers (always 0 unless the spec tolerates errors). */
  readonly socketErrors: number;
  readonly non2xx: number;
}

/** What to load, how hard and for how long. */
export interface WrkSpec {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly connections: number;
  readonly seconds: number;
  /**
   * `Cookie` headers to send in turn, one per request (so a run spreads over many sessions); the
   * requests are formatted once, in wrk's `init`. Without them every request is the same.
   */
  readonly cookies?: readonly string[];
  /** Report socket errors and 4xx/5xx answers instead of failing the run on them. */
  readonly tolerateErrors?: boolean;
}

/**
 * Throws, naming the package to install, when wrk is missing: call it before starting anything
 * the authz suite would have to tear down.
 */
export function requireWrk(): void {
  try {
    accessSync(WRK, constants.X_OK);
  } catch {
    throw new Error(
      `wrk is missing: the authz suite needs ${WRK} (Debian: apt-get install -y wrk); the other suites run without it (--only=...)`,
    );
  }
}

/** The JSON line `wrk-report.lua` prints. */
interface WrkReport {
  readonly requests: number;
  readonly durationUs: number;
  readonly socketErrors: number;
  /**
   * Answers with status 400 or above (wrk's `errors.status`). A 3xx is not counted: suites check
   * that their URL answers 200 before loading it (counting per response in Lua would slow wrk).
   */
  readonly non2xx: number;
  readonly p50Us: number;
  readonly p99Us: number;
}

/**
 * Runs wrk (one thread, HTTP/1.1 keep-alive, loopback) for `seconds` and returns its numbers, read
 * from the JSON line its `done` hook prints. wrk's own 2 s request timeout and a kill at
 * `seconds + 10` bound the run. Any socket error or non-2xx answer fails the run (an error answered
 * fast is not throughput) unless the spec tolerates errors, which are then counted.
 */
export async function runWrk(spec: WrkSpec): Promise<WrkResult> {
  const args = [
    '-t1',
    `-c${spec.connections}`,
    `-d${spec.seconds}s`,
    '--timeout',
    '2s',
    '-s',
    spec.cookies === undefined ? REPORT_SCRIPT : COOKIES_SCRIPT,
    ...Object.entries(spec.headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]),
    spec.url,
    ...(spec.cookies === undefined ? [] : ['--', ...spec.cookies]),
  ];
  const child = spawn(WRK, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), (spec.seconds + 10) * 1000);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  clearTimeout(killer);
  const line = output.split('\n').find((text) => text.startsWith('WRK_JSON '));
  if (code !== 0 || line === undefined) throw new Error(`wrk exited with ${String(code)}:\n${output}`);
  const report = JSON.parse(line.slice('WRK_JSON '.length)) as WrkReport;
  if (spec.tolerateErrors !== true && (report.socketErrors > 0 || report.non2xx > 0))
    throw new Error(
      `wrk ${spec.headers['Host'] ?? spec.url}: ${report.socketErrors} socket errors, ${report.non2xx} 4xx/5xx answers`,
    );
  return {
    requests: report.requests,
    requestsPerSecond: report.requests / (report.durationUs / 1e6),
    p50Us: report.p50Us,
    p99Us: report.p99Us,
    socketErrors: report.socketErrors,
    non2xx: report.non2xx,
  };
}

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

/** One bounded wrk run's numbers. */
export interface WrkResult {
  readonly requests: number;
  readonly requestsPerSecond: number;
  /** Latency percentiles in microseconds (wrk's `--latency` distribution). */
  readonly p50Us: number;
  readonly p99Us: number;
  /** Responses that were not 2xx or 3xx, plus socket errors: must be 0 for the run to count. */
  readonly errors: number;
}

/** What to load, how hard and for how long. */
export interface WrkSpec {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly connections: number;
  readonly threads: number;
  readonly durationS: number;
}

const UNIT_US: Readonly<Record<string, number>> = { us: 1, ms: 1000, s: 1_000_000 };

function latencyUs(output: string, percentile: string): number {
  const match = new RegExp(`^\\s*${percentile}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(output);
  if (match === null) throw new Error(`wrk output has no ${percentile}% latency:\n${output}`);
  return Number(match[1]) * (UNIT_US[match[2] as string] ?? NaN);
}

/** Where the load generator is expected (Debian's `wrk` package). */
const WRK = '/usr/bin/wrk';

/**
 * Throws a clear error, naming the package to install, when wrk is missing: a fresh machine has
 * none, and spawning a missing binary otherwise surfaces as an unhandled ENOENT from deep inside
 * the suite. Call it before starting anything the suite would have to tear down.
 */
export function requireWrk(): void {
  if (!existsSync(WRK)) {
    throw new Error(
      `the authz suite needs wrk at ${WRK}: install it (Debian: apt-get install -y wrk), or skip the suite with --only=compile,change-to-serving,memory,message-size`,
    );
  }
}

/**
 * Runs `/usr/bin/wrk` (HTTP/1.1 keep-alive, loopback) for `durationS` seconds and parses its
 * summary. wrk's own timeout (2 s per request) and a hard kill at duration + 10 s bound the run.
 */
export async function runWrk(spec: WrkSpec): Promise<WrkResult> {
  const args = [
    `-t${spec.threads}`,
    `-c${spec.connections}`,
    `-d${spec.durationS}s`,
    '--latency',
    '--timeout',
    '2s',
    ...Object.entries(spec.headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]),
    spec.url,
  ];
  requireWrk();
  const child = spawn(WRK, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), (spec.durationS + 10) * 1000);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', resolve);
  });
  clearTimeout(killer);
  if (code !== 0) throw new Error(`wrk exited with ${String(code)}:\n${output}`);
  const requests = Number(/(\d+) requests in/.exec(output)?.[1] ?? NaN);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const socketErrors = socket === null ? 0 : socket.slice(1).reduce((sum, n) => sum + Number(n), 0);
  return {
    requests,
    requestsPerSecond: Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? NaN),
    p50Us: latencyUs(output, '50'),
    p99Us: latencyUs(output, '99'),
    errors: non2xx + socketErrors,
  };
}

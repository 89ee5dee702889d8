import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { accepts, REDIS_SERVER_BIN } from '../../test/support/redis-server.js';
import type { Context } from './context.js';
import { freePort } from './http.js';
import { until, whileRunning, type Started } from './processes.js';

/** A redis-server the benchmark started. */
export interface BenchRedis {
  readonly started: Started;
  /** `redis://127.0.0.1:<port>`, for `databroker_storage_connection_string`. */
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * Starts Debian's `redis-server` (REDIS_SERVER overrides the path) on a free 127.0.0.1 port in its
 * own process group, bounded by `timeoutMs`, without persistence, config and data in the run's
 * work directory, and resolves once it accepts connections (within 10 s).
 */
export async function startRedis(context: Context, name: string, timeoutMs: number): Promise<BenchRedis> {
  const port = await freePort();
  const dir = context.workDir;
  const config = join(dir, `${name}.conf`);
  writeFileSync(
    config,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `dbfilename ${name}.rdb`,
      'save ""',
      'appendonly no',
      'daemonize no',
      'loglevel warning',
      '',
    ].join('\n'),
  );
  const started = context.groups.start({
    command: REDIS_SERVER_BIN,
    args: [config],
    cwd: dir,
    env: process.env,
    logFile: join(dir, `${name}.log`),
    timeoutMs,
  });
  await whileRunning(
    started,
    until(() => accepts(port), `redis-server on 127.0.0.1:${port}`, { intervalMs: 20, timeoutMs: 10_000 }),
  );
  return { started, url: `redis://127.0.0.1:${port}`, stop: () => started.stop(5_000) };
}

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { createClient } from 'redis';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { waitFor } from './wait.js';

/** Debian's redis-server; REDIS_SERVER overrides it. */
export const REDIS_SERVER_BIN = process.env['REDIS_SERVER'] ?? '/usr/bin/redis-server';

/** A redis-server the test started; see startRedisServer. */
export interface TestRedisServer {
  readonly port: number;
  /** `redis://127.0.0.1:<port>` (with `:password@` when one was set). */
  readonly url: string;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and waits for it to exit: an outage. */
  stop(): Promise<void>;
  /** Starts it again on the same port (empty: nothing is persisted) and waits until it listens. */
  start(): Promise<void>;
  /** Stops the server and removes its directory. */
  close(): Promise<void>;
  /** SIGSTOP: the process hangs with its connections open (a partition); `resume` or `stop` ends it. */
  pause(): void;
  /** SIGCONT after `pause`. */
  resume(): void;
}

/**
 * Starts Debian's `redis-server` on a free 127.0.0.1 port in a temp directory, without persistence
 * (no RDB, no AOF), and waits (bounded) until it accepts connections. `extraConfig` lines are
 * appended to its config file (e.g. `requirepass secret`).
 */
export async function startRedisServer(
  options: { extraConfig?: readonly string[] } = {},
): Promise<TestRedisServer> {
  const dir = await mkdtemp(join(tmpdir(), 'portcullis-redis-'));
  const port = await freePort();
  const config = join(dir, 'redis.conf');
  await writeFile(
    config,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      'save ""',
      'appendonly no',
      'daemonize no',
      'loglevel warning',
      `logfile ${join(dir, 'redis.log')}`,
      ...(options.extraConfig ?? []),
      '',
    ].join('\n'),
  );
  const password = (options.extraConfig ?? []).find((line) => line.startsWith('requirepass '))?.slice(12);
  let child: ChildProcess | undefined;
  const server: TestRedisServer = {
    port,
    url: `redis://${password === undefined ? '' : `:${encodeURIComponent(password)}@`}127.0.0.1:${port}`,
    async start() {
      if (child !== undefined) return;
      child = spawn(REDIS_SERVER_BIN, [config], { stdio: 'ignore' });
      const started = child;
      await waitFor(
        async () => (started.exitCode === null ? await accepts(port) : Promise.reject(new Error('exited'))),
        {
          what: `redis-server on 127.0.0.1:${port} to accept connections`,
          timeoutMs: 10_000,
          intervalMs: 20,
        },
      );
    },
    async stop() {
      const running = child;
      child = undefined;
      if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
      running.kill('SIGCONT'); // a paused server handles SIGTERM only once it runs
      running.kill('SIGTERM');
      const timer = setTimeout(() => running.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
    async close() {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
    pause() {
      if (child === undefined || !child.kill('SIGSTOP')) throw new Error('redis-server is not running');
    },
    resume() {
      child?.kill('SIGCONT');
    },
  };
  await server.start();
  return server;
}

/** Whether a TCP connection to 127.0.0.1:`port` opens. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A Redis Sentinel the test started, watching one master; see startRedisSentinel. */
export interface TestRedisSentinel {
  readonly port: number;
  /** `redis+sentinel://127.0.0.1:<port>/<master>`. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Starts Debian's redis-server in Sentinel mode (`redis-server sentinel.conf --sentinel`) on a free
 * 127.0.0.1 port, monitoring `master` (quorum 1), and waits until it names the master's address.
 */
export async function startRedisSentinel(
  master: TestRedisServer,
  name = 'mymaster',
): Promise<TestRedisSentinel> {
  const dir = await mkdtemp(join(tmpdir(), 'portcullis-sentinel-'));
  const port = await freePort();
  const config = join(dir, 'sentinel.conf');
  await writeFile(
    config,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      'daemonize no',
      'loglevel warning',
      `logfile ${join(dir, 'sentinel.log')}`,
      `sentinel monitor ${name} 127.0.0.1 ${master.port} 1`,
      `sentinel down-after-milliseconds ${name} 1000`,
      '',
    ].join('\n'),
  );
  const child = spawn(REDIS_SERVER_BIN, [config, '--sentinel'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const sentinel: TestRedisSentinel = {
    port,
    url: `redis+sentinel://127.0.0.1:${port}/${name}`,
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await waitFor(
      async () => (child.exitCode === null ? await accepts(port) : Promise.reject(new Error('exited'))),
      {
        what: `redis-sentinel on 127.0.0.1:${port} to accept connections`,
        timeoutMs: 10_000,
        intervalMs: 20,
      },
    );
  } catch (err) {
    await sentinel.close();
    throw err;
  }
  return sentinel;
}

/**
 * Starts a one-node Redis Cluster: a redis-server with `cluster-enabled yes` that is given every
 * hash slot (CLUSTER ADDSLOTSRANGE 0 16383), waiting until CLUSTER INFO says `cluster_state:ok`.
 * Enough to run commands, scripts and pub/sub through node-redis's Cluster client.
 */
export async function startRedisCluster(): Promise<TestRedisServer & { readonly clusterUrl: string }> {
  const server = await startRedisServer({
    extraConfig: ['cluster-enabled yes', 'cluster-config-file nodes.conf', 'cluster-node-timeout 2000'],
  });
  const client = createClient({ url: server.url });
  await client.connect();
  try {
    await client.sendCommand(['CLUSTER', 'ADDSLOTSRANGE', '0', '16383']);
    await waitFor(
      async () => String(await client.sendCommand(['CLUSTER', 'INFO'])).includes('cluster_state:ok'),
      {
        what: 'the one-node cluster to be ok',
        timeoutMs: 10_000,
      },
    );
  } finally {
    client.destroy();
  }
  return Object.assign(server, { clusterUrl: `redis+cluster://127.0.0.1:${server.port}` });
}

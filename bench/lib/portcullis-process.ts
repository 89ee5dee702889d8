import { join } from 'node:path';
import type { Context } from './context.js';
import type { ChildMessage } from './portcullis-child.js';
import { cli, productEnv, BENCH_REPO } from './product.js';
import { logTail, type Started } from './processes.js';

/**
 * Starts the product's command, `node bin/portcullis.mjs -c <config>` (all-in-one: ADS server and a
 * supervised Envoy), as users start it, in its own process group, bounded by `timeoutMs`.
 */
export function startCli(context: Context, configPath: string, name: string, timeoutMs: number): Started {
  const { command, args } = cli(context.target, ['-c', configPath]);
  return context.groups.start({
    command,
    args,
    cwd: context.target.root,
    env: productEnv(context.target),
    logFile: join(context.workDir, `${name}.log`),
    timeoutMs,
  });
}

/** A running `portcullis-child.ts`. */
export interface PortcullisChild {
  readonly started: Started;
  /** The `Cookie` header of a valid session ('' without sessions). */
  readonly cookie: string;
  /** How long putting the sessions took (ms), and how many failed puts were tried again. */
  readonly putMs: number;
  readonly putRetries: number;
  /** RSS, heap and external memory of the Portcullis process after a full GC, in bytes. */
  memory(): Promise<{ rss: number; heapUsed: number; external: number }>;
  stop(): Promise<void>;
}

/**
 * Starts Portcullis all-in-one through `startAllInOne` in a child process (`portcullis-child.ts`)
 * with `sessions` sessions (their handles keyed by `secret`, the config's `shared_secret`), and
 * resolves once it has started and filled its store.
 */
export async function startPortcullisChild(
  context: Context,
  options: {
    readonly configPath: string;
    readonly name: string;
    readonly sessions?: number;
    readonly secret?: string;
    readonly timeoutMs: number;
  },
): Promise<PortcullisChild> {
  const logFile = join(context.workDir, `${options.name}.log`);
  const started = context.groups.fork(
    join(BENCH_REPO, 'bench', 'lib', 'portcullis-child.ts'),
    [
      `--root=${context.target.root}`,
      `--config=${options.configPath}`,
      `--sessions=${options.sessions ?? 0}`,
      `--secret=${options.secret ?? ''}`,
    ],
    BENCH_REPO,
    logFile,
    options.timeoutMs,
  );
  const { child } = started;
  const replies: ((message: ChildMessage) => void)[] = [];
  child.on('message', (message: ChildMessage) => replies.shift()?.(message));
  const next = <T extends ChildMessage['type']>(type: T): Promise<Extract<ChildMessage, { type: T }>> =>
    new Promise((resolve, reject) => {
      replies.push((message) =>
        message.type === type
          ? resolve(message as Extract<ChildMessage, { type: T }>)
          : reject(new Error(`expected ${type}, got ${message.type}`)),
      );
      void started.exited.then((code) =>
        reject(new Error(`Portcullis exited with ${code}:\n${logTail(started.logFile)}`)),
      );
    });
  const ready = await next('ready');
  return {
    started,
    cookie: ready.cookie,
    putMs: ready.putMs,
    putRetries: ready.putRetries,
    memory: async () => {
      const reply = next('memory');
      child.send({ type: 'memory' });
      const { rss, heapUsed, external } = await reply;
      return { rss, heapUsed, external };
    },
    stop: async () => {
      if (child.connected) child.send({ type: 'stop' });
      await started.stop(10_000);
    },
  };
}

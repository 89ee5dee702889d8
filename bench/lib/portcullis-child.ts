/**
 * Portcullis all-in-one in a process of its own, started by the authz and memory suites with an
 * IPC channel (`ProcessGroups.fork`, so it runs with `--expose-gc`):
 *
 *   node --expose-gc --import tsx bench/lib/portcullis-child.ts --root=<checkout> --config=<file>
 *        [--sessions=<n> --secret=<base64 shared_secret>]
 *
 * It calls the product's own composition root (`startAllInOne` of `cmd/all-in-one`, compiled or
 * source, see `productModule`; it supervises Envoy), puts `n` sessions in its session store
 * (`benchSessionId(0 .. n-1)`, 64 puts at a time: each put seals its session, and a Redis store
 * answers over the network), and tells the parent
 *
 *   { type: 'ready', cookie, ... }   the `Cookie` header of a valid session (when n > 0), how long
 *                                    the puts took and how many failed and were tried again
 *   { type: 'memory', ...usage }     on `{ type: 'memory' }`: process.memoryUsage() after a full GC
 *
 * It stops (Envoy included) on `{ type: 'stop' }` or when the parent goes away.
 */
import { parseArgs } from 'node:util';
import { benchSessionId } from './bench-sessions.js';
import { productModule } from './product.js';

/** Messages this process sends its parent. */
export type ChildMessage =
  | {
      readonly type: 'ready';
      readonly cookie: string;
      /** How long putting the sessions took (ms). */
      readonly putMs: number;
      /** Puts that failed (e.g. a Redis answer later than the store's timeout) and were tried again. */
      readonly putRetries: number;
    }
  | {
      readonly type: 'memory';
      readonly rss: number;
      readonly heapUsed: number;
      readonly external: number;
    };

/** A session as the product's store keeps it (src/session/session.ts). */
interface BenchSession {
  readonly id: string;
  readonly userId: string;
  readonly email: string;
  /** Whether the provider verified the address: e-mail policies match verified addresses only. */
  readonly emailVerified: boolean;
  readonly name: string;
  readonly groups: readonly string[];
  readonly claims: Readonly<Record<string, unknown>>;
  readonly issuedAt: number;
  readonly expiresAt: number;
  /** The identity-provider client of the routes (a session of another client counts as none). */
  readonly idpId: string;
}

/** The part of the product's `startAllInOne` this benchmark uses. */
interface AllInOneModule {
  startAllInOne(options: { configPath: string; env: NodeJS.ProcessEnv; logger: typeof logger }): Promise<{
    readonly sessions: { put(session: BenchSession): Promise<void> };
    readonly reloader: {
      lastGoodBuild():
        | {
            readonly ir: {
              readonly virtualHosts: readonly { readonly routes: readonly { readonly idpId: string }[] }[];
            };
          }
        | undefined;
    };
    stop(options?: { graceMs?: number }): Promise<void>;
  }>;
}

/** The part of the product's session handle codec this benchmark uses. */
interface HandleModule {
  SessionHandles: new (sharedSecret: Uint8Array) => { issue(sessionId: string): string };
}

/** Session puts in flight while filling the store. */
const PUT_CONCURRENCY = 64;

let stopping = false;
const write =
  (level: string) =>
  (obj: unknown, msg?: string): void => {
    if (!stopping) process.stderr.write(`[portcullis ${level}] ${msg ?? ''} ${JSON.stringify(obj)}\n`);
  };
const logger = {
  debug: (): void => {},
  info: (): void => {},
  warn: write('warn'),
  error: write('error'),
  child: () => logger,
};

/** Bench session `index`, valid for an hour: a user with a group and a few claims. */
function benchSession(index: number, now: number, idpId: string): BenchSession {
  return {
    id: benchSessionId(index),
    userId: `user-${index}`,
    email: `user${index}@example.com`,
    emailVerified: true,
    name: `User ${index}`,
    groups: ['staff'],
    claims: { department: 'research', groups: ['staff'], email: `user${index}@example.com` },
    issuedAt: now,
    expiresAt: now + 3_600_000,
    idpId,
  };
}

/** Attempts per session put before the child gives up. */
const PUT_ATTEMPTS = 5;

/**
 * Puts sessions 0 .. `count`-1 with at most `PUT_CONCURRENCY` puts in flight; a put that fails is
 * tried again (up to `PUT_ATTEMPTS`, 100 ms apart). Resolves with how many retries there were.
 */
async function putSessions(
  sessions: { put(session: BenchSession): Promise<void> },
  count: number,
  make: (index: number) => BenchSession,
): Promise<number> {
  let next = 0;
  let retries = 0;
  const put = async (session: BenchSession): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await sessions.put(session);
      } catch (err) {
        if (attempt >= PUT_ATTEMPTS) throw err;
        retries += 1;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  };
  const worker = async (): Promise<void> => {
    for (let index = next++; index < count; index = next++) await put(make(index));
  };
  await Promise.all(Array.from({ length: Math.min(PUT_CONCURRENCY, count) }, worker));
  return retries;
}

/** Full GCs (the process runs with --expose-gc), then this process's memory. */
async function memoryAfterGc(): Promise<ChildMessage> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  for (let round = 0; round < 3; round++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const usage = process.memoryUsage();
  return { type: 'memory', rss: usage.rss, heapUsed: usage.heapUsed, external: usage.external };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      root: { type: 'string' },
      config: { type: 'string' },
      sessions: { type: 'string', default: '0' },
      secret: { type: 'string', default: '' },
    },
  });
  if (values.root === undefined || values.config === undefined) throw new Error('--root and --config');
  const { startAllInOne } = (await import(productModule(values.root, 'cmd/all-in-one'))) as AllInOneModule;
  const running = await startAllInOne({ configPath: values.config, env: process.env, logger });
  const stop = async (): Promise<void> => {
    stopping = true;
    await running.stop({ graceMs: 0 });
    process.exit(0);
  };
  process.on('disconnect', () => void stop());
  process.on('message', (message: { type: string }) => {
    if (message.type === 'stop') void stop();
    if (message.type === 'memory') void memoryAfterGc().then((reply) => process.send?.(reply));
  });
  const count = Number(values.sessions);
  const now = Date.now();
  // The bench config's routes share the global client: its id, as translate gave it to them.
  const idpId = running.reloader.lastGoodBuild()?.ir.virtualHosts[0]?.routes[0]?.idpId ?? 'none';
  const putStarted = performance.now();
  const putRetries = await putSessions(running.sessions, count, (index) => benchSession(index, now, idpId));
  const putMs = Math.round(performance.now() - putStarted);
  if (putRetries > 0) write('warn')({ putRetries, putMs }, 'session puts failed and were tried again');
  let cookie = '';
  if (count > 0) {
    const { SessionHandles } = (await import(productModule(values.root, 'session/handle'))) as HandleModule;
    const handles = new SessionHandles(Buffer.from(values.secret, 'base64'));
    cookie = `theme=dark; _portcullis=${handles.issue(benchSessionId(count >> 1))}`;
  }
  process.send?.({ type: 'ready', cookie, putMs, putRetries } satisfies ChildMessage);
}

await main();

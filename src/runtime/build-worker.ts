import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { errorMessage } from '../shared/errors.js';
import type { ChunkLimits, DeltaChunk } from './build-delta.js';
import { applyChunk, assemble, startStaging, type ReceivedBuild, type Staging } from './apply-delta.js';
import type { NewlyPublic } from './exposure.js';
import type { FromWorker, ToWorker, WorkerExternals, WorkerSetup } from './build-worker-thread.js';
import type { ReloadResult } from './subscribers.js';
import type { PushedDocument } from '../translate/from-file.js';

/** What the worker made of one build request, as the main thread has it. */
export interface WorkerBuild {
  readonly result: ReloadResult;
  /** Protected paths the build made public (the worker compared it with its build before). */
  readonly opened: readonly NewlyPublic[];
  /** The longest the main thread spent on one chunk (ms; reading it off the port not included). */
  readonly longestApplyMs: number;
  readonly chunks: number;
  /** From the first chunk's arrival to the build put together (ms). */
  readonly receiveMs: number;
}

/** How the reload loop starts its build worker. */
export interface BuildWorkerOptions {
  readonly configPath: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly generatedSecrets: { readonly sharedSecret: Buffer; readonly cookieSecret: Buffer };
  readonly chunkLimits?: ChunkLimits;
  /** Test seam: the worker's entry module (default: build-worker-main beside this file). */
  readonly entry?: URL;
  /** The worker's heap limits: past them the worker ends (a failed build), not the process. */
  readonly resourceLimits?: ResourceLimits;
  /** Test seam: `WorkerSetup.afterCompileModule`. */
  readonly afterCompileModule?: string;
}

/**
 * The build worker as the main thread sees it: a worker thread that parses, translates, compiles
 * and encodes each build (build-worker-thread.ts), so the main thread, which answers ext_authz
 * Checks, sign-ins and ADS, never runs the pipeline (0.8 to 2 s of CPU at 10,000 routes). Only
 * the finished build crosses, as a delta from the one before (build-delta.ts), in chunks the main
 * thread gathers one event-loop turn at a time and swaps in whole once the last is in
 * (apply-delta.ts). The main thread keeps its own copy of the build it received last, the base of
 * the next delta, apart from what serves (a build Envoy rejected is still the next delta's base).
 *
 * Why a thread: the pipeline is pure CPU over data that must end up on the main thread; a child
 * process would need the same transfer over a pipe (copied, no ArrayBuffer transfer) plus its own
 * supervision, and slicing the pipeline on the main loop would cut each stage (a YAML parse alone
 * is ~180 ms) into pieces it is not made of. A worker that throws, exits or runs out of memory
 * turns the build into an error (`build` rejects) and is replaced for the next build by a fresh
 * one, which starts from nothing (so its first delta is whole). One build at a time.
 */
export class BuildWorker {
  private worker: Worker | undefined;
  private received: ReceivedBuild | undefined;
  private current:
    | {
        readonly id: number;
        staging: Staging | undefined;
        longest: number;
        firstAt: number | undefined;
        chunks: number;
        readonly resolve: (done: WorkerBuild) => void;
        readonly reject: (err: Error) => void;
      }
    | undefined;
  private ids = 0;
  private closed = false;

  constructor(private readonly options: BuildWorkerOptions) {}

  /**
   * Builds the config (the file, or `pushed`: a config source's document) in the worker; rejects
   * when the worker failed (see the class comment).
   */
  build(request: {
    readonly read?: ReadonlyMap<string, Buffer>;
    readonly pushed?: PushedDocument;
    readonly externals: WorkerExternals;
  }): Promise<WorkerBuild> {
    if (this.closed) return Promise.reject(new Error('the build worker is closed'));
    if (this.current !== undefined) return Promise.reject(new Error('a build is already running'));
    const worker = this.worker ?? this.spawn();
    const id = ++this.ids;
    return new Promise<WorkerBuild>((resolve, reject) => {
      this.current = { id, staging: undefined, longest: 0, firstAt: undefined, chunks: 0, resolve, reject };
      // Kept alive while it builds (a caller may wait on nothing else); idle, it holds nothing open.
      worker.ref();
      const message: ToWorker = {
        kind: 'build',
        id,
        externals: request.externals,
        ...(request.read === undefined ? {} : { read: request.read }),
        ...(request.pushed === undefined ? {} : { pushed: request.pushed }),
      };
      worker.postMessage(message);
    });
  }

  /** Whether a worker is running now (a failed one is replaced at the next build). */
  running(): boolean {
    return this.worker !== undefined;
  }

  /** Stops the worker; a build still running rejects. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    this.settle((current) => current.reject(new Error('the build worker is closed')));
    await worker?.terminate();
  }

  private spawn(): Worker {
    const { configPath, env, generatedSecrets, chunkLimits, resourceLimits, afterCompileModule } =
      this.options;
    const setup: WorkerSetup = {
      portcullisBuildWorker: true,
      configPath,
      env,
      generatedSecrets,
      ...(chunkLimits === undefined ? {} : { chunkLimits }),
      ...(afterCompileModule === undefined ? {} : { afterCompileModule }),
    };
    const entry = this.options.entry ?? workerEntry();
    const worker = new Worker(loadable(entry), {
      eval: entry.pathname.endsWith('.ts'),
      workerData: setup,
      ...(resourceLimits === undefined ? {} : { resourceLimits }),
    });
    worker.unref();
    worker.on('message', (message: FromWorker) => this.onMessage(worker, message));
    worker.on('error', (err) => this.lost(worker, `the build worker failed: ${errorMessage(err)}`));
    worker.on('messageerror', (err) =>
      this.lost(worker, `the build worker sent what cannot be read: ${errorMessage(err)}`),
    );
    worker.on('exit', (code) => this.lost(worker, `the build worker exited (code ${code})`));
    this.worker = worker;
    this.received = undefined;
    return worker;
  }

  private onMessage(worker: Worker, message: FromWorker): void {
    const current = this.current;
    if (worker !== this.worker || current === undefined || message.id !== current.id) return;
    if (message.kind === 'failed') {
      this.settle((done) =>
        done.resolve({ result: message.result, opened: [], longestApplyMs: 0, chunks: 0, receiveMs: 0 }),
      );
      return;
    }
    const started = performance.now();
    current.firstAt ??= started;
    let done: ReceivedBuild | undefined;
    try {
      done = this.take(current, message.chunk);
    } catch (err) {
      this.lost(worker, `the build worker sent a delta that does not apply: ${errorMessage(err)}`);
      return;
    }
    current.chunks += 1;
    current.longest = Math.max(current.longest, performance.now() - started);
    if (done === undefined) {
      // The next chunk once the event loop had its turn (Checks, ADS, sign-ins queued meanwhile).
      setImmediate(() => {
        if (this.worker === worker && this.current === current)
          worker.postMessage({ kind: 'next', id: current.id } satisfies ToWorker);
      });
      return;
    }
    const opened = current.staging?.header?.opened ?? [];
    const round = (ms: number): number => Math.round(ms * 10) / 10;
    const longestApplyMs = round(current.longest);
    const receiveMs = round(performance.now() - (current.firstAt ?? started));
    this.settle((settled) =>
      settled.resolve({ result: done.build, opened, longestApplyMs, chunks: current.chunks, receiveMs }),
    );
  }

  /** Gathers one chunk; the whole build (now the base of the next delta) once it was the last. */
  private take(current: NonNullable<BuildWorker['current']>, chunk: DeltaChunk): ReceivedBuild | undefined {
    current.staging ??= startStaging(chunk);
    applyChunk(current.staging, chunk);
    if (!current.staging.complete) return undefined;
    this.received = assemble(this.received, current.staging);
    return this.received;
  }

  /** The worker stopped or went wrong: the build running fails, the next one starts a fresh worker. */
  private lost(worker: Worker, reason: string): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.received = undefined;
    void worker.terminate();
    this.settle((current) => current.reject(new Error(reason)));
  }

  /** Ends the running build with `how`, and lets the idle worker stop holding the process. */
  private settle(how: (current: NonNullable<BuildWorker['current']>) => void): void {
    const current = this.current;
    this.current = undefined;
    this.worker?.unref();
    if (current !== undefined) how(current);
  }
}

/**
 * The worker's entry: build-worker-main with this file's own extension, so it is the compiled
 * `.js` in dist (the product) and the `.ts` source under tsx (tests, `npm run bench`).
 */
function workerEntry(): URL {
  const extension = extname(fileURLToPath(import.meta.url));
  return new URL(`./build-worker-main${extension}`, import.meta.url);
}

/**
 * What `new Worker` runs for `entry`: a `.js` file as it is; for a `.ts` file, a script (`eval`)
 * that registers tsx in the worker first and then imports it, since on Node 20 a worker does not
 * apply the `--import tsx` it inherits to its own entry (it refuses the `.ts` extension). Only a
 * process already running under tsx loads `.ts` here, so the product never reaches tsx.
 */
function loadable(entry: URL): string | URL {
  if (!entry.pathname.endsWith('.ts')) return entry;
  const tsx = import.meta.resolve('tsx/esm/api');
  return `const { register } = await import(${JSON.stringify(tsx)}); register(); await import(${JSON.stringify(entry.href)});`;
}

import { errorMessage } from '../shared/errors.js';
import type { PinnedAtStart, PushedDocument } from '../translate/from-file.js';
import { build, type BuildInput, type FailedBuild, type GoodBuild } from './build-pipeline.js';
import { diffBuild, type ChunkLimits, type DeltaChunk, type SentBase } from './build-delta.js';
import { newlyPublic } from './exposure.js';
import { asBuffer } from './plain-secrets.js';

/** What the build worker is started with (workerData): what stays the same for every build. */
export interface WorkerSetup {
  /** Marks the workerData of a build worker (so loading this file elsewhere does nothing). */
  readonly portcullisBuildWorker: true;
  readonly configPath: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The process's generated secrets (Reloader): the same in every worker it starts. */
  readonly generatedSecrets: { readonly sharedSecret: Uint8Array; readonly cookieSecret: Uint8Array };
  readonly chunkLimits?: ChunkLimits;
  /**
   * Test seam: the URL of a module whose default export rewrites every build's compiled resources
   * (`BuildInput.afterCompile`, to make a build Envoy rejects); the worker entry imports it.
   */
  readonly afterCompileModule?: string;
}

/** Translate's inputs from outside the file, per build, as plain data. */
export interface WorkerExternals {
  readonly systemCaFile: string;
  readonly pinned?: PinnedAtStart;
}

/** Main thread -> worker: build now, or send the next chunk of build `id`. */
export type ToWorker =
  | {
      readonly kind: 'build';
      readonly id: number;
      /** Bytes the watcher already read (see BuildInput.read). */
      readonly read?: ReadonlyMap<string, Uint8Array>;
      /** A config source's document (see BuildInput.pushed), structured-cloned: built instead of the file. */
      readonly pushed?: PushedDocument;
      readonly externals: WorkerExternals;
    }
  | { readonly kind: 'next'; readonly id: number };

/** Worker -> main thread: build `id` failed, or one chunk of its delta. */
export type FromWorker =
  | { readonly kind: 'failed'; readonly id: number; readonly result: FailedBuild }
  | { readonly kind: 'chunk'; readonly id: number; readonly chunk: DeltaChunk };

/** The side of a MessagePort the worker uses (a test wraps it). */
export interface WorkerPort {
  on(event: 'message', listener: (message: ToWorker) => void): unknown;
  postMessage(message: FromWorker, transfer?: ArrayBuffer[]): void;
}

/**
 * The build worker's loop: each `build` runs the whole pipeline (`build`, from the worker's last
 * good build, so its memo and encode cache stay here) and answers with the failed build, or with
 * the delta from the build it sent last (build-delta.ts), one chunk per `next` the main thread
 * sends once it applied the chunk before (so the main thread reads one chunk per event-loop turn,
 * never a queue of them). Its findings for the reload log (protected paths made public) travel in
 * the first chunk. The state lives in this call, for the worker's life.
 */
export function serveBuilds(
  port: WorkerPort,
  setup: WorkerSetup,
  afterCompile?: BuildInput['afterCompile'],
): void {
  const generatedSecrets = {
    sharedSecret: asBuffer(setup.generatedSecrets.sharedSecret),
    cookieSecret: asBuffer(setup.generatedSecrets.cookieSecret),
  };
  let lastGood: GoodBuild | undefined;
  let sent: SentBase | undefined;
  let sending: { id: number; chunks: readonly DeltaChunk[]; next: number } | undefined;
  const post = (id: number, chunk: DeltaChunk): void =>
    port.postMessage({ kind: 'chunk', id, chunk }, chunk.bytes === undefined ? [] : [chunk.bytes]);
  port.on('message', (message) => {
    if (message.kind === 'next') {
      if (sending?.id !== message.id) return;
      const chunk = sending.chunks[sending.next++];
      if (chunk !== undefined) post(message.id, chunk);
      if (sending.next >= sending.chunks.length) sending = undefined;
      return;
    }
    const read =
      message.read === undefined
        ? undefined
        : new Map([...message.read].map(([path, bytes]) => [path, asBuffer(bytes)] as const));
    let result;
    try {
      result = build(
        {
          configPath: setup.configPath,
          env: setup.env,
          translate: { ...message.externals, generatedSecrets },
          ...(read === undefined ? {} : { read }),
          ...(message.pushed === undefined ? {} : { pushed: message.pushed }),
          ...(afterCompile === undefined ? {} : { afterCompile }),
        },
        lastGood,
      );
    } catch (err) {
      // As the reload loop reports a pass that threw (Reloader.crashed).
      result = {
        ok: false as const,
        stage: 'parse' as const,
        problems: [{ path: '', message: `the config could not be processed: ${errorMessage(err)}` }],
        warnings: [],
        filesRead: lastGood?.filesRead ?? (message.pushed === undefined ? [setup.configPath] : []),
      };
    }
    if (!result.ok) {
      port.postMessage({ kind: 'failed', id: message.id, result });
      return;
    }
    const opened = lastGood === undefined ? [] : newlyPublic(lastGood.ir, result.ir);
    lastGood = result;
    const { memo: _memo, ...published } = result;
    const delta = diffBuild(sent, published, opened, setup.chunkLimits);
    sent = delta.next;
    sending = { id: message.id, chunks: delta.chunks, next: 1 };
    post(message.id, delta.chunks[0] as DeltaChunk);
    if (delta.chunks.length === 1) sending = undefined;
  });
}

/** True for the workerData of a build worker. */
export function isWorkerSetup(data: unknown): data is WorkerSetup {
  return typeof data === 'object' && data !== null && (data as WorkerSetup).portcullisBuildWorker === true;
}

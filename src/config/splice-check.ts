import { Worker } from 'node:worker_threads';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { listOf, restDigest, valueDigest, type DocumentDigests } from './yaml-document-digest.js';
import type { SpliceBase } from './yaml-splice.js';

/** A worker that has not answered in this long is stopped, and the check counts as failed. */
const WORKER_TIMEOUT_MS = 60_000;
/** Item digests computed per event-loop turn: a few milliseconds, so ext_authz and ADS never stall. */
const DIGESTS_PER_TURN = 256;

/** Item digests by item object: spliced documents share unchanged items, which are hashed once. */
const itemDigests = new WeakMap<object, string>();

/**
 * Whether a spliced parse (`base`: its text and document) equals a full parse of the same text.
 * The full parse (several hundred milliseconds at 10,000 routes) runs in a worker thread; this
 * thread digests the spliced document in slices of `DIGESTS_PER_TURN` items, reusing the digests
 * of items it has seen, so the check never holds the event loop for more than a few milliseconds
 * (a synchronous full parse held it for ~250 ms one second after every reload, stalling ext_authz
 * Checks and xDS). Resolves false, never rejects, when the worker fails or times out: the caller
 * then reloads with a full parse, which is always safe.
 */
export async function spliceAgreesWithFullParse(base: SpliceBase): Promise<boolean> {
  const listKey = base.list.key;
  const [full, spliced] = await Promise.all([
    fullParseInWorker(base.text, listKey),
    splicedDigests(base.document, listKey),
  ]);
  if (full === undefined || full.rest !== spliced.rest || full.items.length !== spliced.items.length)
    return false;
  return full.items.every((digest, index) => digest === spliced.items[index]);
}

async function splicedDigests(document: unknown, listKey: string): Promise<DocumentDigests> {
  const items = listOf(document, listKey) ?? [];
  const digests = new Array<string>(items.length);
  let computed = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const cacheable = item !== null && typeof item === 'object';
    let digest = cacheable ? itemDigests.get(item) : undefined;
    if (digest === undefined) {
      digest = valueDigest(item);
      if (cacheable) itemDigests.set(item, digest);
      if (++computed % DIGESTS_PER_TURN === 0) await nextTurn();
    }
    digests[i] = digest;
  }
  return { rest: restDigest(document, listKey), items: digests };
}

/** The digests of a full parse of `text`, from a worker thread; undefined when it fails. */
function fullParseInWorker(text: string, listKey: string): Promise<DocumentDigests | undefined> {
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      worker = new Worker(new URL('./splice-check-worker.mjs', import.meta.url), {
        workerData: { text, listKey },
        // Not the parent's flags (a profiler, preloads): the entry registers its own loader.
        execArgv: [],
        stdout: true,
        stderr: true,
      });
    } catch {
      resolve(undefined);
      return;
    }
    worker.unref();
    const timer = setTimeout(() => void worker.terminate(), WORKER_TIMEOUT_MS);
    timer.unref();
    let answer: DocumentDigests | undefined;
    worker.once('message', (message: DocumentDigests) => {
      answer = message;
      void worker.terminate();
    });
    worker.once('error', () => undefined);
    worker.once('exit', () => {
      clearTimeout(timer);
      resolve(answer);
    });
  });
}

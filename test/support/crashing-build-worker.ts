// A build worker entry for tests of worker failure: the real worker loop (serveBuilds), except that
// a config file containing `#crash-throw` makes the worker throw outside any handler, `#crash-exit`
// makes it exit, and `#crash-oom` makes it allocate until its heap limit ends it.
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { serveBuilds, type ToWorker, type WorkerSetup } from '../../src/runtime/build-worker-thread.js';

const setup = workerData as WorkerSetup;
const port = parentPort;
if (port === null) throw new Error('not a worker');

function crashIfAsked(): void {
  const text = readFileSync(setup.configPath, 'utf8');
  if (text.includes('#crash-exit')) process.exit(3);
  if (text.includes('#crash-throw')) throw new Error('boom in the build worker');
  if (text.includes('#crash-oom')) {
    const hoard: unknown[] = [];
    for (;;) hoard.push(Array.from({ length: 10_000 }, (_, i) => ({ i, text: `${i}`.repeat(20) })));
  }
}

serveBuilds(
  {
    on: (_event, listener) =>
      port.on('message', (message: ToWorker) => {
        if (message.kind === 'build') crashIfAsked();
        listener(message);
      }),
    postMessage: (message, transfer) => port.postMessage(message, transfer),
  },
  setup,
);

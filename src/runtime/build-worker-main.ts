import { parentPort, workerData } from 'node:worker_threads';
import type { BuildInput } from './build-pipeline.js';
import { isWorkerSetup, serveBuilds } from './build-worker-thread.js';

// The build worker's entry module (BuildWorker starts it): runs the worker loop on the port to
// the main thread. Apart from build-worker-thread.ts so that a test's entry can wrap that loop.
// A test's compile-stage seam (`WorkerSetup.afterCompileModule`) is imported before the loop runs.
if (parentPort !== null && isWorkerSetup(workerData)) {
  const seam =
    workerData.afterCompileModule === undefined
      ? undefined
      : ((await import(workerData.afterCompileModule)) as { default: BuildInput['afterCompile'] }).default;
  serveBuilds(parentPort, workerData, seam);
}

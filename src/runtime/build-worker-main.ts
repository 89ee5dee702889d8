import { parentPort, workerData } from 'node:worker_threads';
import { isWorkerSetup, serveBuilds } from './build-worker-thread.js';

// The build worker's entry module (BuildWorker starts it): runs the worker loop on the port to
// the main thread. Apart from build-worker-thread.ts so that a test's entry can wrap that loop.
if (parentPort !== null && isWorkerSetup(workerData)) serveBuilds(parentPort, workerData);

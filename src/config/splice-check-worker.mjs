// Worker thread entry for the splice check (see splice-check.ts): parses one config text in full
// and posts its digests. Plain JavaScript so that it starts in any worker; it loads the TypeScript
// digest module through tsx, as the `portcullis` command loads the rest of the sources.
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { fullParseDigests } = await import('./yaml-document-digest.ts');
parentPort?.postMessage(fullParseDigests(workerData.text, workerData.listKey));

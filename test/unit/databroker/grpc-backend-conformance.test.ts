// The RecordBackend conformance suite against the databroker's gRPC client: client -> Databroker
// service -> MemoryBackend over loopback, so a remote databroker behaves exactly like a local store.
import { MemoryBackend } from '../../../src/databroker/memory-backend.js';
import type { RecordBackend, RecordChange } from '../../../src/session/records.js';
import { startTestDatabroker, testDatabrokerClient } from '../../support/databroker-grpc.js';
import { describeRecordBackend } from '../../support/record-backend-conformance.js';
import { waitFor } from '../../support/wait.js';

describeRecordBackend('gRPC client -> databroker -> memory', async () => {
  const store = new MemoryBackend();
  const databroker = await startTestDatabroker(store);
  const clients: RecordBackend[] = [];
  const client = (): RecordBackend => {
    const opened = testDatabrokerClient(databroker.address);
    clients.push(opened);
    return opened;
  };
  return {
    backend: client(),
    // Another instance whose change feed is already live, as in a running process (its session
    // store watches from the start): a Watch stream goes live asynchronously, and changes made
    // before that are not delivered but announced by `resumed` (watch-feed.ts).
    second: async () => {
      const other = client();
      const heard: RecordChange[] = [];
      other.watch((change) => heard.push(change));
      await waitFor(async () => heard.some((c) => c.kind === 'resumed'), {
        what: "the second client's Watch stream to go live",
        timeoutMs: 5_000,
        intervalMs: 10,
      });
      return other;
    },
    close: async () => {
      await Promise.all(clients.map((c) => c.close()));
      databroker.kill();
      await store.close();
    },
  };
});

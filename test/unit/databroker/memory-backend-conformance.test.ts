import { MemoryBackend } from '../../../src/databroker/memory-backend.js';
import { describeRecordBackend } from '../../support/record-backend-conformance.js';

// The memory backend is one store per process: the feed and lease tests use the backend itself as
// the "other client", and it has no raw form to inspect.
describeRecordBackend('memory', async () => {
  const backend = new MemoryBackend();
  return { backend, close: () => backend.close() };
});

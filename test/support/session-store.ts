// Sessions as every deployment stores them (RecordSessionStore over SealedRecords over a backend),
// here over a MemoryBackend with a fixed test secret: the replacement of the old in-memory store in
// unit tests and fixtures.
import { MemoryBackend } from '../../src/databroker/memory-backend.js';
import { RecordSessionStore } from '../../src/databroker/record-session-store.js';
import { SealedRecords } from '../../src/databroker/sealed-records.js';
import { RECORD_TYPES } from '../../src/session/records.js';
import { silentLogger, type Logger } from '../../src/shared/logger.js';

/** The shared_secret the test stack seals records with (32 bytes of 0x5e). */
export const TEST_RECORDS_SECRET = new Uint8Array(32).fill(0x5e);

/** Options of `memorySessionStore`; every one has a test default. */
export interface TestSessionStoreOptions {
  /** Unix ms clock of the backend and the store (default Date.now). */
  readonly now?: () => number;
  readonly outageGraceMs?: number;
  readonly maxCached?: number;
  readonly logger?: Logger;
  readonly secret?: Uint8Array;
  /** The backend to share (two stores on one backend = two instances); default a new MemoryBackend. */
  readonly backend?: MemoryBackend;
}

/**
 * A RecordSessionStore over SealedRecords over a MemoryBackend (new unless `backend` is given),
 * sealing with TEST_RECORDS_SECRET: the stack all-in-one runs, with a test clock and logger.
 */
export function memorySessionStore(options: TestSessionStoreOptions = {}): RecordSessionStore {
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const secret = options.secret ?? TEST_RECORDS_SECRET;
  const backend = options.backend ?? new MemoryBackend({ now });
  const records = new SealedRecords(backend, { secret: () => secret, logger });
  return new RecordSessionStore(records, {
    outageGraceMs: options.outageGraceMs ?? 30_000,
    now,
    logger,
    ...(options.maxCached === undefined ? {} : { maxCached: options.maxCached }),
  });
}

/** How many live sessions `store`'s record store holds (what the old store's `size` told). */
export async function storedSessionCount(store: RecordSessionStore): Promise<number> {
  return (await store.records.query(RECORD_TYPES.session)).length;
}

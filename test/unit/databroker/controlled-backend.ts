// A RecordBackend wrapper the tests steer: take the store down (every call rejects with
// StoreUnavailableError), report `lost`/`resumed` on the change feed, and hold reads until released.
import type { MemoryBackend } from '../../../src/databroker/memory-backend.js';
import {
  StoreUnavailableError,
  type PutOptions,
  type RawRecord,
  type RecordBackend,
  type RecordChange,
} from '../../../src/session/records.js';

export class ControlledBackend implements RecordBackend {
  /** While true every call rejects with StoreUnavailableError. */
  down = false;
  /** How many `get` calls reached the store. */
  reads = 0;
  private readonly listeners = new Set<(change: RecordChange) => void>();
  private readonly held: (() => void)[] = [];
  private holding = false;

  constructor(readonly inner: MemoryBackend) {
    inner.watch((change) => this.emit(change));
  }

  /** Delivers `change` to this wrapper's watchers (as a backend whose feed dropped or came back would). */
  emit(change: RecordChange): void {
    for (const listener of this.listeners) listener(change);
  }

  /** From now on `get` reads, then waits until `release` is called before answering. */
  hold(): void {
    this.holding = true;
  }

  /** Lets every held `get` go on and stops holding. */
  release(): void {
    this.holding = false;
    for (const resume of this.held.splice(0)) resume();
  }

  /** How many reads are waiting. */
  get waiting(): number {
    return this.held.length;
  }

  async get(type: string, id: string): Promise<RawRecord | undefined> {
    this.check();
    this.reads++;
    const record = await this.inner.get(type, id);
    // Held after reading, so what a held read returns may be overtaken by later writes.
    if (this.holding) await new Promise<void>((resume) => this.held.push(resume));
    return record;
  }

  async put(type: string, id: string, data: string, options?: PutOptions): Promise<RawRecord> {
    this.check();
    return this.inner.put(type, id, data, options);
  }

  async delete(type: string, id: string): Promise<boolean> {
    this.check();
    return this.inner.delete(type, id);
  }

  async query(type: string, options?: { readonly limit?: number }): Promise<RawRecord[]> {
    this.check();
    return this.inner.query(type, options);
  }

  watch(listener: (change: RecordChange) => void): () => void {
    const subscription = (change: RecordChange): void => listener(change);
    this.listeners.add(subscription);
    return () => void this.listeners.delete(subscription);
  }

  async acquireLease(name: string, ttlMs: number): Promise<string | undefined> {
    this.check();
    return this.inner.acquireLease(name, ttlMs);
  }

  async releaseLease(name: string, token: string): Promise<void> {
    this.check();
    return this.inner.releaseLease(name, token);
  }

  async ping(): Promise<void> {
    this.check();
  }

  async close(): Promise<void> {
    await this.inner.close();
  }

  private check(): void {
    if (this.down) throw new StoreUnavailableError('the test store is down');
  }
}

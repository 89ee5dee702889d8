import { randomUUID } from 'node:crypto';
import {
  RecordConflictError,
  StoreUnavailableError,
  type PutOptions,
  type RawRecord,
  type RecordBackend,
  type RecordChange,
} from '../session/records.js';

/** Options of a MemoryBackend; `now` (Unix ms) is injectable so tests drive expiry with a fake clock. */
export interface MemoryBackendOptions {
  readonly now?: () => number;
}

/** Writes between two sweeps of expired records at least (a sweep also waits for `size` writes). */
const SWEEP_EVERY_WRITES = 1024;
/** query's default `limit` (RecordBackend's contract). */
const DEFAULT_QUERY_LIMIT = 10_000;

interface Lease {
  readonly token: string;
  readonly expiresAt: number;
}

/**
 * The record store in this process's memory: the default backend, for one instance only (nothing is
 * shared with other processes, and a restart loses every record, so users sign in again). It keeps
 * RecordBackend's contract exactly like the Redis backend (one conformance suite): a store-wide
 * version counter, expiry by `expiresAt` (an expired record is never returned; expired records are
 * swept on writes, amortised, so memory follows the live records and no timer is needed), `ifVersion`
 * conflicts, leases that end by themselves, and a change feed delivered in commit order right after
 * each commit (a microtask), never `lost`, as nothing can go unreachable. After `close` every call
 * rejects with StoreUnavailableError.
 */
export class MemoryBackend implements RecordBackend {
  private readonly records = new Map<string, Map<string, RawRecord>>();
  private readonly leases = new Map<string, Lease>();
  private readonly listeners = new Set<(change: RecordChange) => void>();
  private readonly now: () => number;
  private version = 0;
  private count = 0;
  private writesSinceSweep = 0;
  private sweepAfterWrites = SWEEP_EVERY_WRITES;
  private closed = false;

  constructor(options: MemoryBackendOptions = {}) {
    this.now = options.now ?? Date.now;
  }

  async get(type: string, id: string): Promise<RawRecord | undefined> {
    this.ensureOpen();
    return this.live(type, id);
  }

  async put(type: string, id: string, data: string, options: PutOptions = {}): Promise<RawRecord> {
    this.ensureOpen();
    const current = this.live(type, id);
    if (options.ifVersion !== undefined && options.ifVersion !== (current?.version ?? 0)) {
      throw new RecordConflictError(type, id);
    }
    const now = this.now();
    const record: RawRecord = {
      type,
      id,
      version: ++this.version,
      data,
      expiresAt: options.ttlMs === undefined ? undefined : now + options.ttlMs,
    };
    let ofType = this.records.get(type);
    if (ofType === undefined) this.records.set(type, (ofType = new Map()));
    if (!ofType.has(id)) this.count++;
    ofType.set(id, record);
    this.changed({ kind: 'put', type, id, version: record.version });
    this.wrote(now);
    return record;
  }

  async delete(type: string, id: string): Promise<boolean> {
    this.ensureOpen();
    const existed = this.live(type, id) !== undefined;
    if (existed) {
      this.remove(type, id);
      this.changed({ kind: 'delete', type, id, version: ++this.version });
    }
    this.wrote(this.now());
    return existed;
  }

  async query(type: string, options: { readonly limit?: number } = {}): Promise<RawRecord[]> {
    this.ensureOpen();
    const limit = options.limit ?? DEFAULT_QUERY_LIMIT;
    const now = this.now();
    const found: RawRecord[] = [];
    for (const record of this.records.get(type)?.values() ?? []) {
      if (found.length >= limit) break;
      if (!isExpired(record, now)) found.push(record);
    }
    return found;
  }

  watch(listener: (change: RecordChange) => void): () => void {
    // A distinct wrapper per call, so watching twice with one function subscribes twice.
    const subscription = (change: RecordChange): void => listener(change);
    this.listeners.add(subscription);
    return () => void this.listeners.delete(subscription);
  }

  async acquireLease(name: string, ttlMs: number): Promise<string | undefined> {
    this.ensureOpen();
    const now = this.now();
    const held = this.leases.get(name);
    if (held !== undefined && held.expiresAt > now) return undefined;
    const token = randomUUID();
    this.leases.set(name, { token, expiresAt: now + ttlMs });
    return token;
  }

  async releaseLease(name: string, token: string): Promise<void> {
    this.ensureOpen();
    if (this.leases.get(name)?.token === token) this.leases.delete(name);
  }

  async ping(): Promise<void> {
    this.ensureOpen();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    this.records.clear();
    this.leases.clear();
    this.count = 0;
  }

  /** Records held, expired ones not yet swept included (for tests of the sweep). */
  get size(): number {
    return this.count;
  }

  /** The record unless absent or expired; an expired one is dropped on the way. */
  private live(type: string, id: string): RawRecord | undefined {
    const record = this.records.get(type)?.get(id);
    if (record === undefined) return undefined;
    if (!isExpired(record, this.now())) return record;
    this.remove(type, id);
    return undefined;
  }

  private remove(type: string, id: string): void {
    const ofType = this.records.get(type);
    if (ofType?.delete(id) !== true) return;
    this.count--;
    if (ofType.size === 0) this.records.delete(type);
  }

  /** Delivers `change` to every watcher after the commit (in commit order: microtasks are FIFO). */
  private changed(change: RecordChange): void {
    if (this.listeners.size === 0) return;
    const listeners = [...this.listeners];
    queueMicrotask(() => {
      for (const listener of listeners) if (this.listeners.has(listener)) listener(change);
    });
  }

  /**
   * Sweeps expired records (and leases) once as many writes happened since the last sweep as
   * records were left by it (at least SWEEP_EVERY_WRITES), so a sweep's cost is amortised over the
   * writes and the map holds at most about twice the records live at the last sweep.
   */
  private wrote(now: number): void {
    if (++this.writesSinceSweep < this.sweepAfterWrites) return;
    this.writesSinceSweep = 0;
    for (const [type, ofType] of this.records) {
      for (const [id, record] of ofType) if (isExpired(record, now)) this.remove(type, id);
    }
    for (const [name, lease] of this.leases) if (lease.expiresAt <= now) this.leases.delete(name);
    this.sweepAfterWrites = Math.max(SWEEP_EVERY_WRITES, this.count);
  }

  private ensureOpen(): void {
    if (this.closed) throw new StoreUnavailableError('the in-memory record store is closed');
  }
}

function isExpired(record: RawRecord, now: number): boolean {
  return record.expiresAt !== undefined && record.expiresAt <= now;
}

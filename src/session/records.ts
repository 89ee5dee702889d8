/**
 * The databroker's record store, as every service sees it: versioned records of a type (sessions,
 * single-use sign-in ids, ...) with expiry, leases and a change feed. Backends (memory, Redis, and
 * the gRPC client of a separately run databroker) implement RecordBackend over opaque `data`
 * strings; the sealing layer above them (databroker/sealed-records.ts) encrypts each record's data
 * with a key derived from `shared_secret`, bound to its type and id, so no backend, store dump or
 * databroker process ever holds a token, email or claim in the clear.
 */
import { PortcullisError } from '../shared/errors.js';

/** One record as a backend holds it: `data` is opaque (sealed) text. Times are Unix milliseconds. */
export interface RawRecord {
  readonly type: string;
  readonly id: string;
  /**
   * Increases with every put or delete of a record of this type (a counter per type, so a write is
   * one atomic step even on Redis Cluster, where a type's keys share a slot): a newer write of
   * the same record always has a larger version, and a type's change feed is in version order.
   * Never 0.
   */
  readonly version: number;
  readonly data: string;
  /** When the record disappears by itself, or undefined for never. */
  readonly expiresAt: number | undefined;
}

/** How a put writes. */
export interface PutOptions {
  /** Time to live: the record is gone (get, query) `ttlMs` after the put. Unset: no expiry. */
  readonly ttlMs?: number;
  /**
   * Optimistic concurrency: write only when the record's current version is this one, 0 meaning
   * "only when absent" (how single-use ids are claimed). A mismatch throws RecordConflictError and
   * writes nothing.
   */
  readonly ifVersion?: number;
}

/**
 * One event of the change feed. `put`/`delete` name a record changed by any instance (this one
 * included). `lost`: the feed stopped (backend unreachable), so changes made elsewhere are not
 * seen until `resumed`, which means changes may have been missed: drop every cached record.
 */
export type RecordChange =
  | { readonly kind: 'put' | 'delete'; readonly type: string; readonly id: string; readonly version: number }
  | { readonly kind: 'lost' }
  | { readonly kind: 'resumed' };

/**
 * A record store backend. Every method rejects with StoreUnavailableError, within a bounded time,
 * when the store cannot be reached; none queues work without bound while it is down. Types and ids
 * are non-empty strings of at most 256 characters without control characters, types without `{`
 * or `}` (Redis Cluster key tags); callers hash anything else.
 */
export interface RecordBackend {
  /** The live record, or undefined when absent or expired. */
  get(type: string, id: string): Promise<RawRecord | undefined>;
  /** Writes `data` (see PutOptions) and returns the record as stored, with its new version. */
  put(type: string, id: string, data: string, options?: PutOptions): Promise<RawRecord>;
  /** Removes the record; true when it existed. */
  delete(type: string, id: string): Promise<boolean>;
  /** Live records of `type`, at most `limit` (default 10,000), in no particular order. */
  query(type: string, options?: { readonly limit?: number }): Promise<RawRecord[]>;
  /**
   * Calls `listener` for every change of any record in the store, from any instance, in the order
   * the store applied them; returns the unsubscribe function. Listener errors are the caller's.
   */
  watch(listener: (change: RecordChange) => void): () => void;
  /**
   * Takes the named lease for `ttlMs` when nobody holds it: resolves with a token for
   * releaseLease, or undefined when another holder has it. A lease ends by itself after `ttlMs`
   * (so a crashed holder never blocks others for longer).
   */
  acquireLease(name: string, ttlMs: number): Promise<string | undefined>;
  /** Ends the lease if `token` still holds it (a lease taken over after expiry is left alone). */
  releaseLease(name: string, token: string): Promise<void>;
  /** Resolves when the store answers (readiness); rejects with StoreUnavailableError otherwise. */
  ping(): Promise<void>;
  /** Closes connections and timers; later calls reject. */
  close(): Promise<void>;
}

/** The store could not be reached or did not answer in time; the message says which store and why. */
export class StoreUnavailableError extends PortcullisError {
  constructor(message: string) {
    super('STORE_UNAVAILABLE', message);
  }
}

/** A put's `ifVersion` did not match the record's current version; nothing was written. */
export class RecordConflictError extends PortcullisError {
  constructor(type: string, id: string) {
    super('RECORD_CONFLICT', `record ${type}/${id} changed since it was read`);
  }
}

/** Record types Portcullis writes (the databroker itself treats types as opaque strings). */
export const RECORD_TYPES = {
  session: 'session',
  /** Single-use ids (sign-in states, handoffs) claimed once across every instance. */
  used: 'used-once',
} as const;

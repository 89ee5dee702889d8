import type { Logger } from '../shared/logger.js';
import { NO_TELEMETRY, type Telemetry } from '../contract/telemetry.js';
import { RECORD_TYPES, StoreUnavailableError, type RecordChange } from '../session/records.js';
import type { Session, SessionStore } from '../session/session.js';
import type { SealedRecords } from './sealed-records.js';
import { decodeSession } from './session-codec.js';

/** Options of a RecordSessionStore. */
export interface RecordSessionStoreOptions {
  /** While the change feed is lost, how long a cached session keeps being served (ms). */
  readonly outageGraceMs: number;
  /** Most sessions cached in this process (about the least recently used dropped first); default 100,000. */
  readonly maxCached?: number;
  /** Unix ms; injectable for tests. */
  readonly now?: () => number;
  readonly logger: Logger;
  /** Where calls that failed with StoreUnavailableError are counted, by operation (metrics). */
  readonly telemetry?: Telemetry;
}

interface Cached {
  readonly session: Session;
  readonly version: number;
  /** When this instance last read or wrote it (for the outage grace). */
  readonly fetchedAt: number;
  /** Read since it was cached or last passed over by eviction (second chance). */
  used: boolean;
}

/** A read or write of one id in progress, and the newest change of that id the feed reported meanwhile. */
interface Flight {
  count: number;
  newestSeen: number;
  /** The store read of this id callers can share (unset once a change made it stale). */
  reading: Promise<Session | undefined> | undefined;
}

const DEFAULT_MAX_CACHED = 100_000;

/**
 * Sessions in the record store (sealed, see SealedRecords), with an in-process cache that the
 * change feed keeps exact: a put or delete of a session by any instance drops it here and notifies
 * the onInvalidate listeners (assertion cache, refresher), so a sign-out in one instance is refused
 * by every other within the feed's latency. `getSync` answers from the cache only (the authorize hot
 * path: a Map lookup, two comparisons and a flag); undefined there means "ask `get`". While the feed is
 * lost a cached session is served for `outageGraceMs` after the loss (or after it was fetched,
 * whichever is later), then `get` goes to the store and its StoreUnavailableError propagates
 * (never read it as "no session"); on `resumed` every cached session is dropped and notified, as
 * changes may have been missed. Expired sessions are never returned. `close` unsubscribes.
 */
export class RecordSessionStore implements SessionStore {
  /** The sealed record store below (for its owner and for tests). */
  readonly records: SealedRecords;
  private readonly cache = new Map<string, Cached>();
  private readonly flights = new Map<string, Flight>();
  private readonly listeners = new Set<(id: string) => void>();
  private readonly now: () => number;
  private readonly maxCached: number;
  private readonly outageGraceMs: number;
  private readonly logger: Logger;
  private readonly telemetry: Telemetry;
  private readonly unwatch: () => void;
  /** When the change feed was lost; undefined while it runs. */
  private lostAt: number | undefined;

  constructor(records: SealedRecords, options: RecordSessionStoreOptions) {
    this.records = records;
    this.now = options.now ?? Date.now;
    this.maxCached = options.maxCached ?? DEFAULT_MAX_CACHED;
    this.outageGraceMs = options.outageGraceMs;
    this.logger = options.logger;
    this.telemetry = options.telemetry ?? NO_TELEMETRY;
    this.unwatch = records.watch((change) => this.changed(change));
  }

  /** The cached session when this instance holds it fresh; undefined means "not known here: call get". */
  getSync(id: string): Session | undefined {
    const cached = this.cache.get(id);
    if (cached === undefined) return undefined;
    const now = this.now();
    if (cached.session.expiresAt <= now) {
      this.cache.delete(id);
      return undefined;
    }
    if (this.lostAt !== undefined && now >= Math.max(this.lostAt, cached.fetchedAt) + this.outageGraceMs) {
      return undefined;
    }
    cached.used = true;
    return cached.session;
  }

  /**
   * The session, from the cache or the store (concurrent misses of one id share one read); rejects
   * with StoreUnavailableError when the store is down.
   */
  async get(id: string): Promise<Session | undefined> {
    const hit = this.getSync(id);
    if (hit !== undefined) return hit;
    const shared = this.flights.get(id)?.reading;
    if (shared !== undefined) return shared;
    const flight = this.begin(id);
    const reading = this.counted('get', this.read(id, flight)).finally(() => {
      if (flight.reading === reading) flight.reading = undefined;
      this.end(id, flight);
    });
    flight.reading = reading;
    return reading;
  }

  /** Reads, opens and checks the stored session, caching it unless a change overtook the read. */
  private async read(id: string, flight: Flight): Promise<Session | undefined> {
    const record = await this.records.get<unknown>(RECORD_TYPES.session, id);
    if (record === undefined) return undefined;
    const session = decodeSession(record.value, id);
    if (session === undefined) {
      this.logger.warn({ id }, 'a stored session record is not a session; treated as absent');
      return undefined;
    }
    if (session.expiresAt <= this.now()) return undefined;
    this.remember(session, record.version, flight);
    return session;
  }

  /**
   * Stores `session` until its expiresAt (an already-expired session is deleted instead), caches
   * it and notifies the listeners, so caches built from an earlier version drop it.
   */
  async put(session: Session): Promise<void> {
    const ttlMs = session.expiresAt - this.now();
    if (ttlMs <= 0) return this.delete(session.id);
    const flight = this.begin(session.id);
    try {
      const { version } = await this.counted(
        'put',
        this.records.put(RECORD_TYPES.session, session.id, session, { ttlMs }),
      );
      // The feed's report of this very write (or a newer one) already notified.
      const notified = flight.newestSeen >= version;
      this.remember(session, version, flight);
      if (!notified) this.notify(session.id);
    } finally {
      this.end(session.id, flight);
    }
  }

  /** Deletes the session everywhere, drops it here and notifies the listeners. */
  async delete(id: string): Promise<void> {
    // A read in flight must not cache what it found before this delete.
    const flight = this.flights.get(id);
    if (flight !== undefined) this.overtaken(flight, Number.POSITIVE_INFINITY);
    this.cache.delete(id);
    await this.counted('delete', this.records.delete(RECORD_TYPES.session, id));
    this.cache.delete(id);
    this.notify(id);
  }

  onInvalidate(listener: (id: string) => void): () => void {
    // A distinct wrapper per call, so subscribing one function twice makes two subscriptions.
    const subscription = (id: string): void => listener(id);
    this.listeners.add(subscription);
    return () => void this.listeners.delete(subscription);
  }

  /** Sessions cached in this process (not the store's count). */
  get cachedCount(): number {
    return this.cache.size;
  }

  /** Stops following the change feed and empties the cache; the record store is its owner's to close. */
  close(): void {
    this.unwatch();
    this.cache.clear();
    this.listeners.clear();
  }

  private changed(change: RecordChange): void {
    if (change.kind === 'lost') {
      this.lostAt ??= this.now();
      return;
    }
    if (change.kind === 'resumed') {
      this.resumed();
      return;
    }
    if (change.type !== RECORD_TYPES.session) return;
    const flight = this.flights.get(change.id);
    if (flight !== undefined) this.overtaken(flight, change.version);
    const cached = this.cache.get(change.id);
    // This instance's own write (cached already), or a report older than what it holds.
    if (cached !== undefined && cached.version >= change.version) return;
    this.cache.delete(change.id);
    this.notify(change.id);
  }

  /** The feed is back but may have missed changes: nothing cached or in flight can be trusted. */
  private resumed(): void {
    this.lostAt = undefined;
    for (const flight of this.flights.values()) this.overtaken(flight, Number.POSITIVE_INFINITY);
    // Writes in flight are notified too: their own notification is skipped once overtaken.
    const dropped = new Set([...this.cache.keys(), ...this.flights.keys()]);
    this.cache.clear();
    for (const id of dropped) this.notify(id);
  }

  /**
   * Caches `session` at `version` unless the feed reported a newer change of it while it was read
   * or written, or a newer version is cached; evicts the least recently used past maxCached.
   */
  private remember(session: Session, version: number, flight: Flight): void {
    if (flight.newestSeen > version) return;
    const cached = this.cache.get(session.id);
    if (cached !== undefined && cached.version > version) return;
    this.cache.delete(session.id);
    this.cache.set(session.id, { session, version, fetchedAt: this.now(), used: false });
    this.evict();
  }

  /**
   * Drops entries past maxCached, least recently used first, approximated by second chance (the
   * CLOCK algorithm over the Map's insertion order): an entry read since it was last passed over
   * moves to the end instead of going. A hit only sets a flag, so getSync stays a lookup.
   */
  private evict(): void {
    while (this.cache.size > this.maxCached) {
      const oldest = this.cache.entries().next();
      if (oldest.done === true) return;
      const [id, entry] = oldest.value;
      this.cache.delete(id);
      if (entry.used) {
        entry.used = false;
        this.cache.set(id, entry);
      }
    }
  }

  /** A change at `version` happened while `flight` ran: what it reads or writes may be older. */
  private overtaken(flight: Flight, version: number): void {
    flight.newestSeen = Math.max(flight.newestSeen, version);
    flight.reading = undefined;
  }

  private begin(id: string): Flight {
    let flight = this.flights.get(id);
    if (flight === undefined)
      this.flights.set(id, (flight = { count: 0, newestSeen: 0, reading: undefined }));
    flight.count++;
    return flight;
  }

  private end(id: string, flight: Flight): void {
    flight.count--;
    if (flight.count === 0 && this.flights.get(id) === flight) this.flights.delete(id);
  }

  /** `work`, with a StoreUnavailableError it rejects with counted as a store error of `operation`. */
  private counted<T>(operation: string, work: Promise<T>): Promise<T> {
    return work.catch((err: unknown) => {
      if (err instanceof StoreUnavailableError) this.telemetry.storeError(operation);
      throw err;
    });
  }

  private notify(id: string): void {
    for (const listener of this.listeners) listener(id);
  }
}

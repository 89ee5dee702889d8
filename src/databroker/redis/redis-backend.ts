/**
 * The Redis record backend (node-redis), shared by every Portcullis instance that points at the
 * same Redis. Data model (`P` is the key prefix, default `portcullis:`):
 *
 * - `P{<type>}:r:<id>`: one hash per record, fields `v` (version), `d` (data, already sealed by the
 *   layer above) and `e` (expiry, Unix ms) with PEXPIREAT at that instant, so Redis drops it.
 * - `P{<type>}:idx`: a sorted set of the type's ids, score = expiry ms or +inf, pruned with
 *   ZREMRANGEBYSCORE by each query (expired ids are skipped by score even before pruning).
 * - `P{<type>}:version`: the type's version counter (INCR). The `{<type>}` hash tag puts a type's
 *   keys in one Cluster slot, so a write is one atomic script (scripts.ts); the price is that
 *   versions increase per type, not store-wide: still strictly increasing for each record and
 *   across the change feed of a type, which is what readers compare.
 * - `P` + `lease:<name>`: a lease, `SET NX PX` with a random token, released by compare-and-delete.
 * - channel `Pchanges`: every put and delete publishes `{kind,type,id,version}` (JSON) from inside
 *   its script, so the feed is in the order Redis applied the writes. A dedicated subscriber
 *   connection delivers it; when that connection drops, or any connection stops answering (a PING
 *   every 500 ms on each and a socket silent for 1 s is closed, see clients.ts; or a command that
 *   timed out or found no connection: a Redis that hangs with its connections open, stopped or
 *   behind a partition, never closes them), the feed emits `lost`, so the outage grace of cached
 *   sessions starts; `resumed` once its own heartbeat comes back through the subscription
 *   (change-feed.ts; changes in between are not replayed: caches drop everything). Heartbeats `{kind:'heartbeat',nonce}` share the
 *   channel. TTL expiry publishes nothing: readers check `expiresAt` (and Redis hides expired keys).
 *
 * Expiry uses this process's clock (`expiresAt = now + ttlMs`, PEXPIREAT), so instances and Redis
 * need synchronised clocks (NTP), as the session cookies already do. Every call fails fast with
 * StoreUnavailableError while Redis is unreachable: no offline queue, a per-command timeout, an
 * OutageGate (one probe in flight instead of a pile of held commands, for Sentinel and Cluster
 * clients that hold commands during rediscovery), and the client reconnects by itself. A write
 * that timed out may still have been applied (or, through Sentinel/Cluster, be applied later).
 */
import { randomUUID } from 'node:crypto';
import { ErrorReply } from 'redis';
import type { Logger } from '../../shared/logger.js';
import { errorMessage } from '../../shared/errors.js';
import type { PutOptions, RawRecord, RecordBackend, RecordChange } from '../../session/records.js';
import { RecordConflictError, StoreUnavailableError } from '../../session/records.js';
import { parseRedisConnectionString } from '../../shared/redis-url.js';
import type { RedisConnection, RedisSubscriber } from './clients.js';
import { createRedisConnection } from './clients.js';
import type { RecordKeys } from './scripts.js';
import { ChangeFeed } from './change-feed.js';

/** Options of createRedisBackend. */
export interface RedisBackendOptions {
  /** `databroker_storage_connection_string` (see connection-string.ts for the forms). */
  readonly url: string;
  readonly logger: Logger;
  /** A command without a reply after this long rejects with StoreUnavailableError. Default 500. */
  readonly commandTimeoutMs?: number;
  /** How long connect() waits for the first connection. Default 5,000. */
  readonly connectTimeoutMs?: number;
  /** Prefix of every key and of the channel, to share one Redis. Default `portcullis:`. */
  readonly keyPrefix?: string;
}

/** A RecordBackend on Redis; `connect()` opens it (see createRedisBackend). */
export interface RedisBackend extends RecordBackend {
  /**
   * Connects the command and the subscriber connection. Rejects with StoreUnavailableError
   * (naming the URL without its password) when Redis does not answer within the connect timeout;
   * the clients then keep reconnecting in the background, and the backend works once they do.
   */
  connect(): Promise<void>;
}

const MAX_NAME = 256;
const DEFAULT_LIMIT = 10_000;
const FIELDS = ['v', 'd', 'e'];
/**
 * Liveness of every connection (clients.ts): a PING this long after the last one settled, and a
 * socket that heard nothing for SOCKET_TIMEOUT_MS is closed. Together they bound how late a hung
 * Redis is noticed on an idle instance (at most 1.5 s; a command notices it within its timeout),
 * and so how long cached sessions may outlive the outage grace.
 */
const PING_INTERVAL_MS = 500;
const SOCKET_TIMEOUT_MS = 1_000;

/**
 * Creates the Redis backend for `options.url` without connecting. Throws a RangeError naming
 * `databroker_storage_connection_string` (never the password) when the URL is not a Redis URL.
 */
export function createRedisBackend(options: RedisBackendOptions): RedisBackend {
  const target = parseRedisConnectionString(options.url);
  const prefix = options.keyPrefix ?? 'portcullis:';
  if (/[{}]/.test(prefix)) throw new RangeError('keyPrefix must not contain { or } (Cluster hash tags)');
  const connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
  const tuning = {
    commandTimeoutMs: options.commandTimeoutMs ?? 500,
    connectTimeoutMs,
    pingIntervalMs: PING_INTERVAL_MS,
    socketTimeoutMs: SOCKET_TIMEOUT_MS,
  };
  const client = createRedisConnection(target, tuning);
  const subscriber = client.duplicate();
  const where = `Redis at ${target.display}`;
  const channel = `${prefix}changes`;
  const feed = new ChangeFeed({
    logger: options.logger,
    publish: (message) => client.publish(channel, message),
  });
  // A command connection that fails or hangs means the subscriber's Redis may too: start the grace.
  watchHealth(client, 'commands', where, options.logger, () => feed.connectionLost());
  watchHealth(subscriber, 'change feed', where, options.logger, () => feed.connectionLost());
  let closed = false;

  const gate = new OutageGate(() => client.ping(), tuning.commandTimeoutMs + 50);
  const call = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    const fail = (why: string): StoreUnavailableError =>
      new StoreUnavailableError(`${where}: ${what} failed: ${why}`);
    if (closed) throw new StoreUnavailableError(`${where}: the backend is closed`);
    if (!client.isReady) throw fail('not connected (reconnecting)');
    if (!(await gate.passable())) throw fail('not answering (waiting for it to come back)');
    try {
      return await withDeadline(run(), gate.deadlineMs, `no answer within ${gate.deadlineMs} ms`);
    } catch (err) {
      gate.failed();
      // No answer, or no connection (an error reply is Redis answering): the feed is in doubt.
      if (!(err instanceof ErrorReply)) feed.connectionLost();
      throw fail(errorMessage(err));
    }
  };
  const keys = (type: string, id: string): RecordKeys => ({
    record: `${prefix}{${type}}:r:${id}`,
    index: `${prefix}{${type}}:idx`,
    counter: `${prefix}{${type}}:version`,
  });

  return {
    async connect() {
      const onMessage = (message: string): void => feed.receive(message);
      const opening = Promise.all([client.connect(), subscriber.connect()]).then(() =>
        subscriber.subscribe(channel, onMessage),
      );
      opening.catch(() => {}); // settled by the race below; later failures are reconnects
      try {
        await withDeadline(opening, connectTimeoutMs, `no connection within ${connectTimeoutMs} ms`);
      } catch (err) {
        throw new StoreUnavailableError(`${where}: ${errorMessage(err)}`);
      }
    },

    async get(type, id) {
      checkName('type', type, true);
      checkName('id', id, false);
      const [v, d, e] = await call('get', () => client.hmGet(keys(type, id).record, FIELDS));
      return toRecord(type, id, v, d, e, Date.now());
    },

    async put(type, id, data, putOptions: PutOptions = {}) {
      checkName('type', type, true);
      checkName('id', id, false);
      const expiresAt = expiryOf(putOptions.ttlMs);
      const ifVersion = putOptions.ifVersion;
      if (ifVersion !== undefined && !(Number.isSafeInteger(ifVersion) && ifVersion >= 0)) {
        throw new RangeError(`ifVersion must be a non-negative integer, got ${ifVersion}`);
      }
      const version = await call('put', () =>
        client.putRecord({ keys: keys(type, id), type, id, data, expiresAt, ifVersion, channel }),
      );
      if (version === 0) throw new RecordConflictError(type, id);
      return { type, id, version, data, expiresAt };
    },

    async delete(type, id) {
      checkName('type', type, true);
      checkName('id', id, false);
      return (await call('delete', () => client.deleteRecord(keys(type, id), type, id, channel))) !== 0;
    },

    async query(type, queryOptions = {}) {
      checkName('type', type, true);
      const limit = queryOptions.limit ?? DEFAULT_LIMIT;
      if (!(Number.isSafeInteger(limit) && limit > 0))
        throw new RangeError(`limit must be a positive integer`);
      const now = Date.now();
      const index = keys(type, '').index;
      const rows = await call('query', async () => {
        const [, ids] = await Promise.all([
          client.zRemRangeByScore(index, '-inf', now),
          client.zRangeByScore(index, `(${now}`, '+inf', { LIMIT: { offset: 0, count: limit } }),
        ]);
        return Promise.all(
          ids.map(async (id) => ({ id, row: await client.hmGet(keys(type, id).record, FIELDS) })),
        );
      });
      return rows.flatMap(({ id, row }) => toRecord(type, id, row[0], row[1], row[2], now) ?? []);
    },

    watch(listener: (change: RecordChange) => void) {
      return feed.add(listener);
    },

    async acquireLease(name, ttlMs) {
      checkName('lease name', name, false);
      checkTtl(ttlMs);
      const token = randomUUID();
      const reply = await call('acquireLease', () =>
        client.set(`${prefix}lease:${name}`, token, {
          condition: 'NX',
          expiration: { type: 'PX', value: Math.ceil(ttlMs) },
        }),
      );
      return reply === null ? undefined : token;
    },

    async releaseLease(name, token) {
      checkName('lease name', name, false);
      await call('releaseLease', () => client.releaseLease(`${prefix}lease:${name}`, token));
    },

    async ping() {
      await call('ping', () => client.ping());
    },

    async close() {
      if (closed) return;
      closed = true;
      feed.close();
      await Promise.all([shutDown(client), shutDown(subscriber)]);
    },
  };
}

/** The record from an HMGET of v, d, e; undefined when absent or expired at `now`. */
function toRecord(
  type: string,
  id: string,
  v: string | null | undefined,
  d: string | null | undefined,
  e: string | null | undefined,
  now: number,
): RawRecord | undefined {
  if (v === null || v === undefined || d === null || d === undefined) return undefined;
  const expiresAt = e === null || e === undefined ? undefined : Number(e);
  if (expiresAt !== undefined && expiresAt <= now) return undefined;
  return { type, id, version: Number(v), data: d, expiresAt };
}

/** Throws a RangeError unless `value` is a valid type, id or lease name (records.ts's rules). */
function checkName(what: string, value: string, isType: boolean): void {
  if (value.length === 0 || value.length > MAX_NAME) {
    throw new RangeError(`${what} must have 1 to ${MAX_NAME} characters, got ${value.length}`);
  }
  if (/\p{Cc}/u.test(value)) throw new RangeError(`${what} must not contain control characters`);
  if (isType && /[{}]/.test(value)) throw new RangeError(`${what} must not contain { or }`);
}

function checkTtl(ttlMs: number): void {
  if (!(Number.isFinite(ttlMs) && ttlMs > 0)) throw new RangeError(`ttlMs must be positive, got ${ttlMs}`);
}

function expiryOf(ttlMs: number | undefined): number | undefined {
  if (ttlMs === undefined) return undefined;
  checkTtl(ttlMs);
  return Date.now() + Math.ceil(ttlMs);
}

/**
 * Logs the connection's state changes once each (down at warn with the error, up again at info),
 * not every reconnect attempt; the `error` listener also keeps node-redis from throwing. Down is
 * an error (a socket silent past its timeout included) or a reconnect; up is ready again or a
 * PING answered. `onDown` runs on every sign of trouble (the feed
 * emits `lost` once and proves recovery itself).
 */
function watchHealth(
  connection: RedisConnection | RedisSubscriber,
  role: string,
  where: string,
  logger: Logger,
  onDown?: () => void,
): void {
  let down = false;
  let wasReady = false;
  const markDown = (err: unknown): void => {
    if (!wasReady) return;
    onDown?.();
    if (down) return;
    down = true;
    logger.warn({ err: errorMessage(err), role }, `${where}: connection lost or not answering`);
  };
  const markUp = (): void => {
    wasReady = true;
    if (!down) return;
    down = false;
    logger.info({ role }, `${where}: connection back`);
  };
  for (const event of ['error', 'node-error']) connection.on(event, markDown);
  for (const event of ['reconnecting', 'node-reconnecting']) connection.on(event, () => markDown(event));
  for (const event of ['ready', 'node-ready', 'ping-interval']) connection.on(event, markUp);
}

async function shutDown(connection: RedisConnection | RedisSubscriber): Promise<void> {
  try {
    await connection.close();
  } catch {
    connection.destroy(); // not open, or Redis gone: drop the socket
  }
}

/**
 * Keeps calls from piling up while Redis does not answer. node-redis bounds a single server's
 * commands itself (no offline queue, command timeout), but Sentinel and Cluster clients hold a
 * command while they rediscover the topology, without limit. So after a failed call the gate is
 * shut: calls are refused at once while one probe (PING) is in flight; the first call that finds
 * no probe starts one and waits for it (up to `deadlineMs`); the gate opens when a probe answers.
 * At most one probe is pending at any time, however long the outage.
 */
class OutageGate {
  readonly deadlineMs: number;
  readonly #probe: () => Promise<unknown>;
  #shut = false;
  #inFlight: Promise<boolean> | undefined;

  constructor(probe: () => Promise<unknown>, deadlineMs: number) {
    this.#probe = probe;
    this.deadlineMs = deadlineMs;
  }

  /** Records a failed call: later calls wait for a probe to answer. */
  failed(): void {
    this.#shut = true;
  }

  /** Whether a call may go to Redis now (see the class comment). */
  async passable(): Promise<boolean> {
    if (!this.#shut) return true;
    if (this.#inFlight !== undefined) return false;
    const probe = this.#probe().then(
      () => {
        this.#shut = false;
        return true;
      },
      () => false,
    );
    this.#inFlight = probe;
    void probe.finally(() => {
      if (this.#inFlight === probe) this.#inFlight = undefined;
    });
    return withDeadline(probe, this.deadlineMs, 'probe').catch(() => false);
  }
}

/** Settles as `promise` does, or rejects with Error(`message`) after `ms`. */
async function withDeadline<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

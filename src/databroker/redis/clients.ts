/**
 * Builds the node-redis client for a parsed connection string: `createClient` for one server,
 * `createSentinel` for Sentinel, `createCluster` for Cluster, all with the record scripts, a
 * per-command timeout (`commandOptions.timeout`), no offline queue (commands fail at once while
 * disconnected instead of waiting), a bounded command queue, liveness on every connection to Redis
 * itself, the change feed's subscriber included, and a reconnect strategy with capped, jittered
 * backoff (the client reconnects by itself, forever).
 *
 * Liveness: node-redis's `pingInterval` sends a PING `pingIntervalMs` after the last one settled,
 * and `socketTimeout` closes a socket that received nothing for `socketTimeoutMs` (an `error`
 * event, then a reconnect). Both are needed: node-redis's command timeout stops counting once a
 * command is written, so a PING to a Redis that hangs with its connections open (stopped, or
 * behind a partition) never fails by itself, it only stops further PINGs; the socket timeout is
 * what notices the silence, at most `pingIntervalMs + socketTimeoutMs` after the hang began. A
 * healthy idle connection hears a PONG every interval, so it never times out. The Sentinels'
 * own connections have neither (one hung Sentinel does not stop the master's feed).
 *
 * The backend sees the clients through `RedisConnection`, the few commands it uses, so the three
 * kinds are interchangeable.
 */
import { createClient, createCluster, createSentinel } from 'redis';
import type { RedisTarget } from '../../shared/redis-url.js';
import type { PutArguments, RecordKeys } from './scripts.js';
import { RECORD_SCRIPTS } from './scripts.js';

/** The commands and events of a node-redis client (single, Sentinel or Cluster) the backend uses. */
export interface RedisConnection {
  hmGet(key: string, fields: string[]): Promise<ReadonlyArray<string | null>>;
  zRemRangeByScore(key: string, min: string | number, max: string | number): Promise<number>;
  zRangeByScore(
    key: string,
    min: string | number,
    max: string | number,
    options: { LIMIT: { offset: number; count: number } },
  ): Promise<string[]>;
  set(
    key: string,
    value: string,
    options: { condition: 'NX'; expiration: { type: 'PX'; value: number } },
  ): Promise<string | null>;
  putRecord(args: PutArguments): Promise<number>;
  deleteRecord(keys: RecordKeys, type: string, id: string, channel: string): Promise<number>;
  releaseLease(key: string, token: string): Promise<number>;
  ping(): Promise<string>;
  publish(channel: string, message: string): Promise<number>;
  /** A second connection with the same settings, for the change feed's subscription. */
  duplicate(): RedisSubscriber;
  connect(): Promise<unknown>;
  close(): Promise<unknown>;
  destroy(): unknown;
  on(event: string, listener: (arg: unknown) => void): unknown;
  /** Connected and able to take commands now. */
  readonly isReady: boolean;
}

/** The subscriber connection of the change feed. */
export interface RedisSubscriber {
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
  connect(): Promise<unknown>;
  close(): Promise<unknown>;
  destroy(): unknown;
  on(event: string, listener: (arg: unknown) => void): unknown;
}

/** Knobs shared by every kind of client. */
export interface ClientTuning {
  /** Per-command timeout: a command without a reply after this long rejects. */
  readonly commandTimeoutMs: number;
  /** Time one TCP (and TLS) connection attempt may take. */
  readonly connectTimeoutMs: number;
  /** Each connection to Redis sends a PING this long after its last one settled. */
  readonly pingIntervalMs: number;
  /** A connection to Redis that received nothing for this long is closed and reopened (> pingIntervalMs). */
  readonly socketTimeoutMs: number;
}

/** Reconnect delays grow 50 ms, 100 ms, ... up to 2 s, each with up to 50% random jitter. */
export function reconnectDelay(retries: number, random: () => number = Math.random): number {
  const base = Math.min(50 * 2 ** Math.min(retries, 10), 2_000);
  return Math.round(base * (0.5 + random() / 2));
}

/** Creates (without connecting) the client for `target`; see the module comment for its settings. */
export function createRedisConnection(target: RedisTarget, tuning: ClientTuning): RedisConnection {
  const sentinelSocket = {
    connectTimeout: tuning.connectTimeoutMs,
    reconnectStrategy: (retries: number) => reconnectDelay(retries),
    ...(target.tls ? { tls: true as const } : {}),
  };
  const socket = { ...sentinelSocket, socketTimeout: tuning.socketTimeoutMs };
  const credentials = {
    ...(target.username === undefined ? {} : { username: target.username }),
    ...(target.password === undefined ? {} : { password: target.password }),
  };
  const queueing = { disableOfflineQueue: true, commandsQueueMaxLength: 100_000 };
  const behaviour = { ...queueing, pingInterval: tuning.pingIntervalMs };
  const commandOptions = { timeout: tuning.commandTimeoutMs };
  switch (target.kind) {
    case 'single':
      return createClient({
        socket: { ...socket, host: target.host, port: target.port },
        ...credentials,
        ...behaviour,
        database: target.database,
        scripts: RECORD_SCRIPTS,
        commandOptions,
      });
    case 'sentinel':
      return createSentinel({
        name: target.master,
        sentinelRootNodes: target.nodes.map((node) => ({ host: node.host, port: node.port })),
        nodeClientOptions: { socket, ...credentials, ...behaviour },
        sentinelClientOptions: { socket: sentinelSocket, ...queueing },
        scripts: RECORD_SCRIPTS,
        commandOptions,
      });
    case 'cluster':
      return createCluster({
        rootNodes: target.nodes.map((node) => ({ socket: { ...socket, host: node.host, port: node.port } })),
        defaults: { socket, ...credentials, ...behaviour },
        scripts: RECORD_SCRIPTS,
        commandOptions,
      });
  }
}

/**
 * The RecordBackend of a process that does not run the databroker itself: every method is a call
 * to `portcullis.databroker.v1.Databroker` at `databroker_service_url` (service.ts serves it).
 * Each unary call carries the runtime's internal token and a deadline, so a databroker that is
 * down or slow costs a caller at most that long: nothing waits for the channel to become ready
 * (`waitForReady` off) and nothing queues without bound. gRPC statuses map back to the contract's
 * errors in one place (`errorOf`).
 */
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../../shared/logger.js';
import {
  RecordConflictError,
  StoreUnavailableError,
  type PutOptions,
  type RawRecord,
  type RecordBackend,
  type RecordChange,
} from '../../session/records.js';
import {
  MAX_QUERY_RESPONSE_BYTES,
  createDatabrokerCodec,
  methodPath,
  type DatabrokerMessages,
  type DatabrokerMethod,
  type RecordMessage,
  type WatchEventMessage,
} from './messages.js';
import { WatchFeed, type WatchBackoff } from './watch-feed.js';

/** Options of `createDatabrokerClient`. */
export interface DatabrokerClientOptions {
  /** `host:port` of the databroker's gRPC server (IPv6 hosts in brackets). */
  readonly address: string;
  /** TLS verified against the derived CA (`tls_derive`), or insecure. */
  readonly credentials: grpc.ChannelCredentials;
  /** The runtime's internal token (audience `databroker`), added to every call. */
  readonly callCredentials: grpc.CallCredentials;
  /** Deadline of each unary call (`grpc_client_timeout`), ms. */
  readonly timeoutMs: number;
  /** Deadline of `get`, which the authorize path waits on; at most `timeoutMs`. Default 500 ms. */
  readonly readTimeoutMs?: number;
  /** More grpc-js channel options (TLS name overrides); they win over the defaults here. */
  readonly channelOptions?: grpc.ChannelOptions;
  readonly logger: Logger;
  /** Reconnect delays of the Watch stream (tests shorten them). */
  readonly watchBackoff?: WatchBackoff;
  /** Randomness of the Watch reconnect jitter, in [0, 1). Default Math.random. */
  readonly random?: () => number;
}

/**
 * Channel defaults: keepalive pings notice a dead connection (and so a silent Watch) within about
 * 30 s; reconnect backoff is capped at 2 s so calls work again soon after a databroker restart
 * (calls made meanwhile fail fast with UNAVAILABLE); a Query answer may be as large as the
 * server allows.
 */
const CHANNEL_DEFAULTS: grpc.ChannelOptions = {
  'grpc.keepalive_time_ms': 20_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 2_000,
  'grpc.max_receive_message_length': MAX_QUERY_RESPONSE_BYTES + 1024 * 1024,
  'grpc.enable_channelz': 0,
};

const toRecord = (message: RecordMessage): RawRecord => ({
  type: message.type,
  id: message.id,
  version: message.version,
  data: message.data,
  expiresAt: message.expires_at_ms,
});

/**
 * Maps a failed call to the contract's errors: ABORTED (or FAILED_PRECONDITION) of a put ->
 * RecordConflictError; INVALID_ARGUMENT -> RangeError with the databroker's message (it names the
 * field); anything else (UNAVAILABLE, DEADLINE_EXCEEDED, UNAUTHENTICATED, INTERNAL, ...) ->
 * StoreUnavailableError naming the databroker's address: the store cannot be used.
 */
function errorOf(
  err: grpc.ServiceError,
  method: DatabrokerMethod,
  address: string,
  timeoutMs: number,
  record?: { type: string; id: string },
): Error {
  const { status } = grpc;
  if ((err.code === status.ABORTED || err.code === status.FAILED_PRECONDITION) && record !== undefined) {
    return new RecordConflictError(record.type, record.id);
  }
  if (err.code === status.INVALID_ARGUMENT) {
    return new RangeError(`databroker at ${address} refused ${method}: ${err.details}`);
  }
  const why =
    err.code === status.DEADLINE_EXCEEDED
      ? `no answer within ${timeoutMs} ms`
      : err.code === status.UNAUTHENTICATED
        ? 'it refused our internal token (do both use the same shared_secret?)'
        : `${status[err.code] ?? err.code}: ${err.details}`;
  return new StoreUnavailableError(`databroker at ${address}: ${method} failed: ${why}`);
}

/**
 * Connects (lazily, on the first call) to the databroker at `options.address`. Unary calls have
 * a deadline of `timeoutMs` (`get`: `readTimeoutMs`) and reject with StoreUnavailableError when
 * the databroker is unreachable, slow or refuses the token. `watch` shares one Watch stream per
 * client (watch-feed.ts: `lost` when it breaks, `resumed` once live again). `close` ends the
 * stream and the channel; later calls reject with StoreUnavailableError.
 */
export function createDatabrokerClient(options: DatabrokerClientOptions): RecordBackend {
  const { address, logger } = options;
  const codec = createDatabrokerCodec();
  const client = new grpc.Client(address, options.credentials, {
    ...CHANNEL_DEFAULTS,
    ...options.channelOptions,
  });
  const readTimeoutMs = Math.min(options.timeoutMs, options.readTimeoutMs ?? 500);
  let closed = false;

  const call = <Req extends keyof DatabrokerMessages, Res extends keyof DatabrokerMessages>(
    method: DatabrokerMethod,
    names: readonly [Req, Res],
    request: DatabrokerMessages[Req],
    timeoutMs: number = options.timeoutMs,
    record?: { type: string; id: string },
  ): Promise<DatabrokerMessages[Res]> =>
    new Promise((resolve, reject) => {
      if (closed) {
        reject(new StoreUnavailableError(`databroker at ${address}: the client is closed`));
        return;
      }
      client.makeUnaryRequest(
        methodPath(method),
        (message: DatabrokerMessages[Req]) => Buffer.from(codec.encode(names[0], message)),
        (bytes: Buffer) => codec.decode(names[1], bytes),
        request,
        new grpc.Metadata(),
        { deadline: Date.now() + timeoutMs, credentials: options.callCredentials },
        (err, response) => {
          if (err !== null) reject(errorOf(err, method, address, timeoutMs, record));
          else if (response === undefined)
            reject(new StoreUnavailableError(`databroker at ${address}: empty answer`));
          else resolve(response);
        },
      );
    });

  const feed = new WatchFeed({
    address,
    logger,
    ...(options.watchBackoff === undefined ? {} : { backoff: options.watchBackoff }),
    ...(options.random === undefined ? {} : { random: options.random }),
    open: () =>
      client.makeServerStreamRequest(
        methodPath('Watch'),
        (message: DatabrokerMessages['WatchRequest']) => Buffer.from(codec.encode('WatchRequest', message)),
        (bytes: Buffer): WatchEventMessage => codec.decode('WatchEvent', bytes),
        {},
        new grpc.Metadata(),
        { credentials: options.callCredentials },
      ),
  });

  const backend: RecordBackend = {
    async get(type, id) {
      const { record } = await call('Get', ['GetRequest', 'GetResponse'], { type, id }, readTimeoutMs);
      return record === null ? undefined : toRecord(record);
    },
    async put(type: string, id: string, data: string, putOptions: PutOptions = {}) {
      const request: DatabrokerMessages['PutRequest'] = { type, id, data };
      if (putOptions.ttlMs !== undefined) request.ttl_ms = putOptions.ttlMs;
      if (putOptions.ifVersion !== undefined) request.if_version = putOptions.ifVersion;
      const names = ['PutRequest', 'PutResponse'] as const;
      const { record } = await call('Put', names, request, options.timeoutMs, { type, id });
      if (record === null)
        throw new StoreUnavailableError(`databroker at ${address}: Put answered no record`);
      return toRecord(record);
    },
    async delete(type, id) {
      return (await call('Delete', ['DeleteRequest', 'DeleteResponse'], { type, id })).existed;
    },
    async query(type, queryOptions = {}) {
      const request = queryOptions.limit === undefined ? { type } : { type, limit: queryOptions.limit };
      const { records } = await call('Query', ['QueryRequest', 'QueryResponse'], request);
      return records.map(toRecord);
    },
    watch(listener: (change: RecordChange) => void) {
      return feed.add(listener);
    },
    async acquireLease(name, ttlMs) {
      const names = ['AcquireLeaseRequest', 'AcquireLeaseResponse'] as const;
      return (await call('AcquireLease', names, { name, ttl_ms: ttlMs })).token;
    },
    async releaseLease(name, token) {
      await call('ReleaseLease', ['ReleaseLeaseRequest', 'ReleaseLeaseResponse'], { name, token });
    },
    async ping() {
      await call('Ping', ['PingRequest', 'PingResponse'], {});
    },
    async close() {
      closed = true;
      feed.close();
      client.close();
    },
  };
  return backend;
}

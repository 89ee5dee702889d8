/**
 * The databroker's gRPC service: a `databroker` process serves its RecordBackend (memory or Redis)
 * to the other processes of a split deployment. Records arrive sealed by the callers, so this side
 * only checks arguments, calls the backend and maps its errors to gRPC statuses:
 * StoreUnavailableError -> UNAVAILABLE, RecordConflictError -> ABORTED, a bad argument ->
 * INVALID_ARGUMENT naming the field, anything else -> INTERNAL (logged; only a fixed text goes over
 * the wire, never a stack trace).
 */
import * as grpc from '@grpc/grpc-js';
import { errorMessage } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import {
  RecordConflictError,
  StoreUnavailableError,
  type RawRecord,
  type RecordBackend,
  type RecordChange,
} from '../../session/records.js';
import {
  DATABROKER_SERVICE,
  InvalidArgumentError,
  MAX_QUERY_LIMIT,
  MAX_QUERY_RESPONSE_BYTES,
  checkData,
  checkInteger,
  checkName,
  createDatabrokerCodec,
  type DatabrokerCodec,
  type DatabrokerMessages,
  type RecordMessage,
} from './messages.js';

/** Options of `registerDatabrokerService`. */
export interface DatabrokerServiceOptions {
  /**
   * Whether a call may proceed, from its metadata (the runtime passes its internal-token check).
   * Every call, Watch included, is asked before anything is read from the backend or sent.
   */
  readonly authorize: (metadata: grpc.Metadata) => boolean | Promise<boolean>;
  readonly logger: Logger;
  /**
   * Watch events a stream may have waiting to be sent before it is ended with RESOURCE_EXHAUSTED
   * (the client reconnects and drops its caches): a reader that stops reading never makes the
   * databroker hold more. Default 10,000.
   */
  readonly maxPendingEvents?: number;
}

/** What `registerDatabrokerService` returns. */
export interface DatabrokerService {
  /**
   * Ends every open Watch stream with UNAVAILABLE (clients reconnect elsewhere or later), so that
   * `server.tryShutdown` does not wait for streams that never end by themselves.
   */
  close(): void;
}

type Status = { code: grpc.status; details: string };

/** A call ended with a given status (refused, or an answer over its bound). */
class CallStatusError extends Error {
  constructor(readonly status: Status) {
    super(status.details);
  }
}

/** The error of a call as the status sent to the client; unexpected errors are logged here. */
function statusOf(err: unknown, method: string, logger: Logger): Status {
  if (err instanceof CallStatusError) return err.status;
  if (err instanceof InvalidArgumentError || err instanceof RangeError) {
    return { code: grpc.status.INVALID_ARGUMENT, details: err.message };
  }
  if (err instanceof StoreUnavailableError) return { code: grpc.status.UNAVAILABLE, details: err.message };
  if (err instanceof RecordConflictError) return { code: grpc.status.ABORTED, details: err.message };
  logger.error({ method, error: errorMessage(err) }, 'databroker: call failed');
  return { code: grpc.status.INTERNAL, details: `databroker ${method} failed` };
}

const toMessage = (record: RawRecord): RecordMessage => ({
  type: record.type,
  id: record.id,
  version: record.version,
  data: record.data,
  ...(record.expiresAt === undefined ? {} : { expires_at_ms: record.expiresAt }),
});

/** One unary method: its request and response message names and what it does with the request. */
type Handler<Req extends keyof DatabrokerMessages, Res extends keyof DatabrokerMessages> = {
  readonly request: Req;
  readonly response: Res;
  readonly run: (request: DatabrokerMessages[Req]) => Promise<DatabrokerMessages[Res]>;
};

/** The unary methods over `backend`, each checking its arguments before the backend sees them. */
function unaryHandlers(backend: RecordBackend, codec: DatabrokerCodec) {
  const handler = <Req extends keyof DatabrokerMessages, Res extends keyof DatabrokerMessages>(
    h: Handler<Req, Res>,
  ): Handler<Req, Res> => h;
  return {
    Get: handler({
      request: 'GetRequest',
      response: 'GetResponse',
      run: async ({ type, id }) => {
        const record = await backend.get(checkName('type', type), checkName('id', id));
        return { record: record === undefined ? null : toMessage(record) };
      },
    }),
    Put: handler({
      request: 'PutRequest',
      response: 'PutResponse',
      run: async ({ type, id, data, ttl_ms, if_version }) => {
        const record = await backend.put(checkName('type', type), checkName('id', id), checkData(data), {
          ...(ttl_ms === undefined ? {} : { ttlMs: checkInteger('ttl_ms', ttl_ms, 1) }),
          ...(if_version === undefined ? {} : { ifVersion: checkInteger('if_version', if_version, 0) }),
        });
        return { record: toMessage(record) };
      },
    }),
    Delete: handler({
      request: 'DeleteRequest',
      response: 'DeleteResponse',
      run: async ({ type, id }) => ({
        existed: await backend.delete(checkName('type', type), checkName('id', id)),
      }),
    }),
    Query: handler({
      request: 'QueryRequest',
      response: 'QueryResponse',
      run: async ({ type, limit }) => {
        const records = await backend.query(checkName('type', type), {
          limit: limit === undefined ? MAX_QUERY_LIMIT : checkInteger('limit', limit, 1, MAX_QUERY_LIMIT),
        });
        const response = { records: records.map(toMessage) };
        // Encoded once more here to bound the answer; a query is an administrative, rare call.
        if (codec.encode('QueryResponse', response).length > MAX_QUERY_RESPONSE_BYTES) {
          throw new CallStatusError({
            code: grpc.status.RESOURCE_EXHAUSTED,
            details: `query answer larger than ${MAX_QUERY_RESPONSE_BYTES} bytes; ask with a lower limit`,
          });
        }
        return response;
      },
    }),
    AcquireLease: handler({
      request: 'AcquireLeaseRequest',
      response: 'AcquireLeaseResponse',
      run: async ({ name, ttl_ms }) => {
        const token = await backend.acquireLease(checkName('name', name), checkInteger('ttl_ms', ttl_ms, 1));
        return token === undefined ? {} : { token };
      },
    }),
    ReleaseLease: handler({
      request: 'ReleaseLeaseRequest',
      response: 'ReleaseLeaseResponse',
      run: async ({ name, token }) => {
        await backend.releaseLease(checkName('name', name), checkName('token', token));
        return {};
      },
    }),
    Ping: handler({
      request: 'PingRequest',
      response: 'PingResponse',
      run: async () => {
        await backend.ping();
        return {};
      },
    }),
  };
}

/**
 * Adds `portcullis.databroker.v1.Databroker` over `backend` to `server`. Every call whose metadata
 * fails `authorize` ends UNAUTHENTICATED (logged with its peer) before its request is decoded.
 * Bounds: types, ids and lease names as RecordBackend requires them, data up to 1 MiB, query limit
 * up to 10,000 and its answer up to 32 MiB (RESOURCE_EXHAUSTED beyond).
 *
 * Watch: the stream subscribes to the backend's feed, then sends `subscribed` once the backend
 * answers a ping (so a client never goes live on a store that is down), then every put and delete
 * the backend reported since subscribing. When the backend
 * reports `lost`, the stream ends with UNAVAILABLE: the client reconnects (with backoff) and, once
 * subscribed again, tells its listeners `resumed`, so every change made meanwhile counts as
 * missed. The backend's `resumed` is not forwarded: a stream that is live never saw `lost`.
 */
export function registerDatabrokerService(
  server: grpc.Server,
  backend: RecordBackend,
  options: DatabrokerServiceOptions,
): DatabrokerService {
  const { logger } = options;
  const codec = createDatabrokerCodec();
  const refuse = async (
    method: string,
    call: grpc.ServerUnaryCall<Buffer, unknown> | WatchCall,
  ): Promise<Status | undefined> => {
    let allowed = false;
    try {
      allowed = await options.authorize(call.metadata);
    } catch (err) {
      logger.warn({ method, error: errorMessage(err) }, 'databroker: authorizing a call failed');
    }
    if (allowed) return undefined;
    logger.warn(
      { method, peer: call.getPeer() },
      'databroker: call refused (UNAUTHENTICATED): no valid internal token in its metadata',
    );
    return { code: grpc.status.UNAUTHENTICATED, details: 'a valid Portcullis internal token is required' };
  };

  const unary = <Req extends keyof DatabrokerMessages, Res extends keyof DatabrokerMessages>(
    method: string,
    h: Handler<Req, Res>,
  ): grpc.handleUnaryCall<Buffer, Uint8Array> => {
    return (call, callback) => {
      const answer = async (): Promise<Uint8Array> => {
        const refused = await refuse(method, call);
        if (refused !== undefined) throw new CallStatusError(refused);
        let request: DatabrokerMessages[Req];
        try {
          request = codec.decode(h.request, call.request);
        } catch {
          throw new InvalidArgumentError(`undecodable ${h.request}`);
        }
        return codec.encode(h.response, await h.run(request));
      };
      answer().then(
        (response) => callback(null, response),
        (err: unknown) => callback(statusOf(err, method, logger)),
      );
    };
  };

  const handlers = unaryHandlers(backend, codec);
  const watches = new Set<(status: Status) => void>();
  server.addService(DATABROKER_SERVICE, {
    Get: unary('Get', handlers.Get),
    Put: unary('Put', handlers.Put),
    Delete: unary('Delete', handlers.Delete),
    Query: unary('Query', handlers.Query),
    AcquireLease: unary('AcquireLease', handlers.AcquireLease),
    ReleaseLease: unary('ReleaseLease', handlers.ReleaseLease),
    Ping: unary('Ping', handlers.Ping),
    Watch: (call: WatchCall) => {
      void serveWatch(call, {
        backend,
        codec,
        logger,
        refuse: () => refuse('Watch', call),
        maxPending: options.maxPendingEvents ?? 10_000,
        watches,
      });
    },
  });
  return {
    close: () => {
      for (const end of [...watches]) end({ code: grpc.status.UNAVAILABLE, details: 'databroker closing' });
    },
  };
}

type WatchCall = grpc.ServerWritableStream<Buffer, Uint8Array>;

/** One Watch stream, from the authorization check to its end (see registerDatabrokerService). */
async function serveWatch(
  call: WatchCall,
  context: {
    backend: RecordBackend;
    codec: DatabrokerCodec;
    logger: Logger;
    refuse: () => Promise<Status | undefined>;
    maxPending: number;
    watches: Set<(status: Status) => void>;
  },
): Promise<void> {
  const { backend, codec, logger, watches } = context;
  const refused = await context.refuse();
  if (refused !== undefined) {
    call.emit('error', refused);
    return;
  }
  if (call.cancelled) return;
  let live = false;
  let ended = false;
  // Changes from the subscription until `subscribed` is sent, which follow it.
  const early: Uint8Array[] = [];
  let unsubscribe: (() => void) | undefined;
  const stop = (): void => {
    ended = true;
    watches.delete(end);
    unsubscribe?.();
    unsubscribe = undefined;
  };
  function end(status: Status): void {
    if (ended) return;
    stop();
    call.emit('error', status);
  }
  watches.add(end);
  call.on('cancelled', stop);
  const forward = (change: RecordChange): void => {
    if (ended) return;
    if (change.kind === 'lost') {
      end({ code: grpc.status.UNAVAILABLE, details: "the databroker's store change feed was lost" });
      return;
    }
    if (change.kind === 'resumed') return;
    if (call.writableLength + early.length >= context.maxPending) {
      logger.warn({ pending: call.writableLength }, 'databroker: Watch reader too slow; ending its stream');
      end({ code: grpc.status.RESOURCE_EXHAUSTED, details: 'too many changes waiting to be read' });
      return;
    }
    const kind = change.kind === 'put' ? 'KIND_PUT' : 'KIND_DELETE';
    const changed = { kind, type: change.type, id: change.id, version: change.version } as const;
    const event = codec.encode('WatchEvent', { changed });
    if (live) call.write(event);
    else early.push(event);
  };
  unsubscribe = backend.watch(forward);
  if (ended) {
    // A `lost` delivered during subscription already ended the stream; drop the late subscription.
    unsubscribe();
    return;
  }
  try {
    await backend.ping();
  } catch (err) {
    end(statusOf(err, 'Watch', logger));
    return;
  }
  if (ended) return;
  live = true;
  call.write(codec.encode('WatchEvent', { subscribed: {} }));
  for (const event of early.splice(0)) call.write(event);
}

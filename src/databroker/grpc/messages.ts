/**
 * The wire side of `portcullis.databroker.v1.Databroker` (proto/src/portcullis/databroker/v1/
 * databroker.proto): the grpc-js service definition, the protobufjs codec of its messages (the
 * reflection root of proto/envoy.json, which `npm run proto` generates from our .proto too), and
 * the argument checks the server applies before a backend sees a request. Shared by the server and
 * the client so both speak exactly the same paths and messages.
 */
import type * as grpc from '@grpc/grpc-js';
import type protobuf from 'protobufjs';
import { messageType } from '../../proto/proto-root.js';
import type { EnumValue, Message } from '../../proto/messages.js';

/** Fully qualified name of the service. */
export const DATABROKER_SERVICE_NAME = 'portcullis.databroker.v1.Databroker';

/** The methods of the service, by their proto name. */
export const DATABROKER_METHODS = [
  'Get',
  'Put',
  'Delete',
  'Query',
  'Watch',
  'AcquireLease',
  'ReleaseLease',
  'Ping',
] as const;
export type DatabrokerMethod = (typeof DATABROKER_METHODS)[number];

/** The gRPC path of `method` (`/portcullis.databroker.v1.Databroker/Get`). */
export const methodPath = (method: DatabrokerMethod): string => `/${DATABROKER_SERVICE_NAME}/${method}`;

const toBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
const passThrough = (bytes: Buffer): Buffer => bytes;

/**
 * The service for grpc-js with messages passed as bytes both ways: the server decodes requests in
 * its handlers (so bytes that do not decode answer INVALID_ARGUMENT rather than grpc-js's generic
 * INTERNAL) and the client encodes and decodes with `DatabrokerCodec`.
 */
export const DATABROKER_SERVICE: grpc.ServiceDefinition = Object.fromEntries(
  DATABROKER_METHODS.map((method) => [
    method,
    {
      path: methodPath(method),
      requestStream: false,
      responseStream: method === 'Watch',
      originalName: method,
      requestSerialize: toBuffer,
      requestDeserialize: passThrough,
      responseSerialize: toBuffer,
      responseDeserialize: passThrough,
    },
  ]),
);

/** A record as it travels (proto field names; uint64 as numbers: versions and times stay < 2^53). */
export interface RecordMessage {
  readonly type: string;
  readonly id: string;
  readonly version: number;
  readonly data: string;
  readonly expires_at_ms?: number;
}

/**
 * One Watch event: the stream is live (`subscribed`), or one record changed (`changed`). Encoded
 * with one of the two set; decoded, `event` names which one is.
 */
export interface WatchEventMessage {
  readonly event?: 'subscribed' | 'changed';
  readonly subscribed?: Record<string, never> | null;
  readonly changed?: {
    readonly kind: 'KIND_PUT' | 'KIND_DELETE' | 'KIND_UNSPECIFIED';
    readonly type: string;
    readonly id: string;
    readonly version: number;
  } | null;
}

/** Every message of the service, by its proto name, as the plain objects the code handles. */
export interface DatabrokerMessages {
  GetRequest: { type: string; id: string };
  GetResponse: { record: RecordMessage | null };
  PutRequest: { type: string; id: string; data: string; ttl_ms?: number; if_version?: number };
  PutResponse: { record: RecordMessage | null };
  DeleteRequest: { type: string; id: string };
  DeleteResponse: { existed: boolean };
  QueryRequest: { type: string; limit?: number };
  QueryResponse: { records: RecordMessage[] };
  WatchRequest: Record<string, never>;
  WatchEvent: WatchEventMessage;
  AcquireLeaseRequest: { name: string; ttl_ms: number };
  AcquireLeaseResponse: { token?: string };
  ReleaseLeaseRequest: { name: string; token: string };
  ReleaseLeaseResponse: Record<string, never>;
  PingRequest: Record<string, never>;
  PingResponse: Record<string, never>;
}

/** The field names `Ours` uses (an empty message's `Record<string, never>` uses none). */
type FieldNames<Ours> = keyof { [K in keyof Ours as string extends K ? never : K]: Ours[K] };

/** The names `Ours` uses that `Theirs` does not declare (`never` when all are declared). */
type Undeclared<Ours, Theirs> = Exclude<FieldNames<Ours>, keyof Theirs>;

/** Compiles only when `T` is `never`. */
type NoneOf<T extends never> = T;

/**
 * A compile-time check, not a value: the plain objects above name only fields (and enum names)
 * that the generated types of databroker.proto declare (proto/envoy-types.d.ts), so a field
 * misspelt here or renamed in the .proto fails `npm run typecheck`. The decoded shape stays
 * hand-written (every field present, `null` messages, the `event` oneof name protobufjs adds on
 * decode), which the generated input types do not describe.
 */
export type DatabrokerFieldsDeclared = NoneOf<
  | {
      [K in keyof DatabrokerMessages]: Undeclared<
        Omit<DatabrokerMessages[K], 'event'>,
        Message<`portcullis.databroker.v1.${K}`>
      >;
    }[keyof DatabrokerMessages]
  | Undeclared<RecordMessage, Message<'portcullis.databroker.v1.Record'>>
  | Undeclared<NonNullable<WatchEventMessage['changed']>, Message<'portcullis.databroker.v1.RecordChanged'>>
  | Exclude<
      NonNullable<WatchEventMessage['changed']>['kind'],
      EnumValue<'portcullis.databroker.v1.RecordChanged.Kind'>
    >
>;

/**
 * Encodes and decodes the service's messages with protobufjs. `decode` returns every field with
 * its default (strings '', numbers 0, messages null) except proto3 `optional` fields, which are
 * present only when sent; uint64 becomes a number; enums become their names. Bytes that are not
 * the message throw (protobufjs's error).
 */
export interface DatabrokerCodec {
  encode<K extends keyof DatabrokerMessages>(name: K, message: DatabrokerMessages[K]): Uint8Array;
  decode<K extends keyof DatabrokerMessages>(name: K, bytes: Uint8Array): DatabrokerMessages[K];
}

/** Builds the codec, looking each message type up once. The caller holds it (one per server or client). */
export function createDatabrokerCodec(): DatabrokerCodec {
  const types = new Map<string, protobuf.Type>();
  const typeOf = (name: string): protobuf.Type => {
    let type = types.get(name);
    if (type === undefined) {
      type = messageType(`portcullis.databroker.v1.${name}`);
      types.set(name, type);
    }
    return type;
  };
  const conversion: protobuf.IConversionOptions = {
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: true,
  };
  return {
    encode: (name, message) => {
      const type = typeOf(name);
      return type.encode(type.fromObject(message)).finish();
    },
    decode: <K extends keyof DatabrokerMessages>(name: K, bytes: Uint8Array) => {
      const type = typeOf(name);
      return type.toObject(type.decode(bytes), conversion) as DatabrokerMessages[K];
    },
  };
}

/** The largest `data` a record may carry, in UTF-8 bytes (1 MiB). */
export const MAX_DATA_BYTES = 1024 * 1024;

/** The default and largest `limit` of a Query (RecordBackend's default). */
export const MAX_QUERY_LIMIT = 10_000;

/** The largest encoded Query answer (bytes); a larger one ends RESOURCE_EXHAUSTED. */
export const MAX_QUERY_RESPONSE_BYTES = 32 * 1024 * 1024;

/** A request argument the server refuses (INVALID_ARGUMENT); the message names the field. */
export class InvalidArgumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidArgumentError';
  }
}

/**
 * Checks a type, id, lease name or token as RecordBackend requires them: a non-empty string of at
 * most 256 characters without control characters. Throws InvalidArgumentError naming `field`.
 */
export function checkName(field: string, value: string): string {
  if (value.length === 0) throw new InvalidArgumentError(`${field} is required`);
  if (value.length > 256) throw new InvalidArgumentError(`${field} is longer than 256 characters`);
  if (/\p{Cc}/u.test(value)) throw new InvalidArgumentError(`${field} contains a control character`);
  return value;
}

/** Checks `data` against MAX_DATA_BYTES. */
export function checkData(data: string): string {
  if (Buffer.byteLength(data, 'utf8') > MAX_DATA_BYTES) {
    throw new InvalidArgumentError(`data is larger than ${MAX_DATA_BYTES} bytes`);
  }
  return data;
}

/** Checks an integer field against [min, max] (max defaults to the largest safe integer). */
export function checkInteger(
  field: string,
  value: number,
  min: number,
  max: number = Number.MAX_SAFE_INTEGER,
): number {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(`${field} must be an integer from ${min} to ${max}`);
  }
  return value;
}

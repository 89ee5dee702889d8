import type { Decision } from '../decision.js';

// Field numbers from envoy/service/auth/v3/external_auth.proto, google/rpc/status.proto,
// envoy/type/v3/http_status.proto and envoy/config/core/v3/base.proto (proto/envoy.json). Each
// constant is the whole one-byte tag: (field << 3) | wire type.
const RESPONSE_STATUS = 0x0a; // 1, message
const RESPONSE_DENIED = 0x12; // 2, message
const RESPONSE_OK = 0x1a; // 3, message
const STATUS_CODE = 0x08; // 1, int32
const STATUS_MESSAGE = 0x12; // 2, string
const OK_HEADERS = 0x12; // 2, repeated HeaderValueOption
const OK_HEADERS_TO_REMOVE = 0x2a; // 5, repeated string
const DENIED_STATUS = 0x0a; // 1, HttpStatus
const DENIED_HEADERS = 0x12; // 2, repeated HeaderValueOption
const DENIED_BODY = 0x1a; // 3, string
const HTTP_STATUS_CODE = 0x08; // 1, enum
const OPTION_HEADER = 0x0a; // 1, HeaderValue
const OPTION_APPEND_ACTION = 0x18; // 3, enum
const HEADER_KEY = 0x0a; // 1, string
const HEADER_VALUE = 0x12; // 2, string

const OVERWRITE_IF_EXISTS_OR_ADD = 2;
const GRPC_OK = 0;
const GRPC_PERMISSION_DENIED = 7;
const GRPC_UNAUTHENTICATED = 16;

type Utf8Buffer = Buffer & { utf8Write(value: string, offset: number): number };
type Header = readonly [string, string];

/** Bytes of a varint holding `value` as protobuf encodes an int32 (negatives take 10 bytes). */
function varintSize(value: number): number {
  if (value < 0) return 10;
  return value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x200000 ? 3 : value < 0x10000000 ? 4 : 5;
}

/** Bytes of a length-delimited field body of `length` bytes, prefix included (tag excluded). */
const delimited = (length: number): number => varintSize(length) + length;

const utf8Length = (value: string): number => (value.length === 0 ? 0 : Buffer.byteLength(value, 'utf8'));

/** UTF-8 sizes of each header's key and value, in order: [key0, value0, key1, value1, ...]. */
function headerSizes(headers: readonly Header[]): number[] {
  const sizes: number[] = [];
  for (const [key, value] of headers) sizes.push(utf8Length(key), utf8Length(value));
  return sizes;
}

/** Body size of HeaderValue{key, value} from the key's and value's UTF-8 sizes. */
const headerValueSize = (key: number, value: number): number => 2 + delimited(key) + delimited(value);
/** Body size of HeaderValueOption{header, append_action}. */
const optionSize = (key: number, value: number): number => 1 + delimited(headerValueSize(key, value)) + 2;

/** Size of a repeated HeaderValueOption field, tags included. */
function optionsSize(sizes: readonly number[]): number {
  let size = 0;
  for (let index = 0; index < sizes.length; index += 2) {
    size += 1 + delimited(optionSize(sizes[index] as number, sizes[index + 1] as number));
  }
  return size;
}

/** A bounded forward writer into one preallocated Buffer. */
class Writer {
  pos = 0;
  constructor(readonly buffer: Utf8Buffer) {}

  byte(value: number): void {
    this.buffer[this.pos++] = value;
  }

  varint(value: number): void {
    if (value < 0) {
      let low = value >>> 0;
      for (let index = 0; index < 4; index++) {
        this.byte((low & 0x7f) | 0x80);
        low >>>= 7;
      }
      // Bits 28..31 of the low word, then the sign-extended high word (all ones).
      this.byte((low & 0x0f) | 0x70 | 0x80);
      for (let index = 0; index < 4; index++) this.byte(0xff);
      this.byte(0x01);
      return;
    }
    let rest = value >>> 0;
    while (rest >= 0x80) {
      this.byte((rest & 0x7f) | 0x80);
      rest >>>= 7;
    }
    this.byte(rest);
  }

  /** A string field whose UTF-8 size is `size`. */
  string(tag: number, value: string, size: number): void {
    this.byte(tag);
    this.varint(size);
    if (size > 0) this.pos += this.buffer.utf8Write(value, this.pos);
  }

  options(tag: number, headers: readonly Header[], sizes: readonly number[]): void {
    headers.forEach(([key, value], index) => {
      const keySize = sizes[2 * index] as number;
      const valueSize = sizes[2 * index + 1] as number;
      this.byte(tag);
      this.varint(optionSize(keySize, valueSize));
      this.byte(OPTION_HEADER);
      this.varint(headerValueSize(keySize, valueSize));
      this.string(HEADER_KEY, key, keySize);
      this.string(HEADER_VALUE, value, valueSize);
      this.byte(OPTION_APPEND_ACTION);
      this.byte(OVERWRITE_IF_EXISTS_OR_ADD);
    });
  }
}

/**
 * Allocates the whole response and writes its `status` and the tag and length of the
 * `http_response` (`ok_response` or `denied_response`) whose body of `bodySize` bytes follows.
 */
function startResponse(grpcCode: number, message: string, tag: number, bodySize: number): Writer {
  const messageSize = utf8Length(message);
  const statusBody = 3 + delimited(messageSize);
  const size = 1 + delimited(statusBody) + 1 + delimited(bodySize);
  const writer = new Writer(Buffer.allocUnsafe(size) as Utf8Buffer);
  writer.byte(RESPONSE_STATUS);
  writer.varint(statusBody);
  writer.byte(STATUS_CODE);
  writer.byte(grpcCode);
  writer.string(STATUS_MESSAGE, message, messageSize);
  writer.byte(tag);
  writer.varint(bodySize);
  return writer;
}

/**
 * Encodes a Decision as a CheckResponse, byte for byte what `encodeCheckResponse` (the protobufjs
 * reference in `check-codec.ts`) produces, in one exactly sized Buffer: fields in ascending
 * number order, present-but-empty strings and the empty-message `ok_response` written, header
 * options with `append_action` OVERWRITE_IF_EXISTS_OR_ADD. Allow: gRPC OK, headers set and
 * removed. Deny: the HTTP status, headers and body for the client, gRPC UNAUTHENTICATED for 401
 * and PERMISSION_DENIED otherwise. One difference by design: a string with a lone UTF-16
 * surrogate is written as U+FFFD (valid UTF-8, which Envoy requires), where protobufjs may write
 * an invalid sequence.
 */
export function writeCheckResponse(decision: Decision): Buffer {
  if (decision.kind === 'allow') {
    const sizes = headerSizes(decision.setHeaders);
    const removeSizes = decision.removeHeaders.map(utf8Length);
    let okBody = optionsSize(sizes);
    for (const size of removeSizes) okBody += 1 + delimited(size);
    const writer = startResponse(GRPC_OK, '', RESPONSE_OK, okBody);
    writer.options(OK_HEADERS, decision.setHeaders, sizes);
    decision.removeHeaders.forEach((name, index) =>
      writer.string(OK_HEADERS_TO_REMOVE, name, removeSizes[index] as number),
    );
    return writer.buffer;
  }
  const grpcCode = decision.status === 401 ? GRPC_UNAUTHENTICATED : GRPC_PERMISSION_DENIED;
  // As protobufjs's int32: negatives sign-extended, everything else (NaN, fractions) through >>> 0.
  const httpStatus = decision.status < 0 ? decision.status | 0 : decision.status >>> 0;
  const httpStatusBody = 1 + varintSize(httpStatus);
  const sizes = headerSizes(decision.headers);
  const bodySize = utf8Length(decision.body);
  const deniedBody = 1 + delimited(httpStatusBody) + optionsSize(sizes) + 1 + delimited(bodySize);
  const writer = startResponse(grpcCode, decision.reasons[0] ?? '', RESPONSE_DENIED, deniedBody);
  writer.byte(DENIED_STATUS);
  writer.varint(httpStatusBody);
  writer.byte(HTTP_STATUS_CODE);
  writer.varint(httpStatus);
  writer.options(DENIED_HEADERS, decision.headers, sizes);
  writer.string(DENIED_BODY, decision.body, bodySize);
  return writer.buffer;
}

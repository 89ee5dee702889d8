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

/** Sizes of one response, computed once and then used while writing. */
class Plan {
  readonly strings = new Map<string, number>();

  utf8(value: string): number {
    let size = this.strings.get(value);
    if (size === undefined) {
      size = Buffer.byteLength(value, 'utf8');
      this.strings.set(value, size);
    }
    return size;
  }

  /** Body size of HeaderValue{key, value}. */
  header([key, value]: Header): number {
    return 2 + delimited(this.utf8(key)) + delimited(this.utf8(value));
  }

  /** Body size of HeaderValueOption{header, append_action}. */
  option(header: Header): number {
    return 1 + delimited(this.header(header)) + 2;
  }

  options(headers: readonly Header[]): number {
    let size = 0;
    for (const header of headers) size += 1 + delimited(this.option(header));
    return size;
  }
}

/** A bounded forward writer into one preallocated Buffer. */
class Writer {
  pos = 0;
  constructor(
    readonly buffer: Utf8Buffer,
    private readonly plan: Plan,
  ) {}

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

  string(tag: number, value: string): void {
    const size = this.plan.utf8(value);
    this.byte(tag);
    this.varint(size);
    if (size > 0) this.pos += this.buffer.utf8Write(value, this.pos);
  }

  options(tag: number, headers: readonly Header[]): void {
    for (const header of headers) {
      this.byte(tag);
      this.varint(this.plan.option(header));
      this.byte(OPTION_HEADER);
      this.varint(this.plan.header(header));
      this.string(HEADER_KEY, header[0]);
      this.string(HEADER_VALUE, header[1]);
      this.byte(OPTION_APPEND_ACTION);
      this.byte(OVERWRITE_IF_EXISTS_OR_ADD);
    }
  }
}

/**
 * Allocates the whole response and writes its `status` and the tag and length of the
 * `http_response` (`ok_response` or `denied_response`) whose body of `bodySize` bytes follows.
 */
function startResponse(plan: Plan, grpcCode: number, message: string, tag: number, bodySize: number): Writer {
  const statusBody = 3 + delimited(plan.utf8(message));
  const size = 1 + delimited(statusBody) + 1 + delimited(bodySize);
  const writer = new Writer(Buffer.allocUnsafe(size) as Utf8Buffer, plan);
  writer.byte(RESPONSE_STATUS);
  writer.varint(statusBody);
  writer.byte(STATUS_CODE);
  writer.byte(grpcCode);
  writer.string(STATUS_MESSAGE, message);
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
  const plan = new Plan();
  if (decision.kind === 'allow') {
    const okBody =
      plan.options(decision.setHeaders) +
      decision.removeHeaders.reduce((size, name) => size + 1 + delimited(plan.utf8(name)), 0);
    const writer = startResponse(plan, GRPC_OK, '', RESPONSE_OK, okBody);
    writer.options(OK_HEADERS, decision.setHeaders);
    for (const name of decision.removeHeaders) writer.string(OK_HEADERS_TO_REMOVE, name);
    return writer.buffer;
  }
  const grpcCode = decision.status === 401 ? GRPC_UNAUTHENTICATED : GRPC_PERMISSION_DENIED;
  // As protobufjs's int32: negatives sign-extended, everything else (NaN, fractions) through >>> 0.
  const httpStatus = decision.status < 0 ? decision.status | 0 : decision.status >>> 0;
  const httpStatusBody = 1 + varintSize(httpStatus);
  const deniedBody =
    1 + delimited(httpStatusBody) + plan.options(decision.headers) + 1 + delimited(plan.utf8(decision.body));
  const writer = startResponse(plan, grpcCode, decision.reasons[0] ?? '', RESPONSE_DENIED, deniedBody);
  writer.byte(DENIED_STATUS);
  writer.varint(httpStatusBody);
  writer.byte(HTTP_STATUS_CODE);
  writer.varint(httpStatus);
  writer.options(DENIED_HEADERS, decision.headers);
  writer.string(DENIED_BODY, decision.body);
  return writer.buffer;
}

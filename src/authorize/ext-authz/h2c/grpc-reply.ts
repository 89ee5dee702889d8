import {
  FLAG_END_HEADERS,
  FLAG_END_STREAM,
  FRAME_DATA,
  FRAME_HEADER_SIZE,
  FRAME_HEADERS,
  frame,
  writeFrameHeader,
} from './frame.js';

/**
 * Response header blocks of the h2c Check server, HPACK-encoded once (RFC 7541): indexed
 * `:status 200` and literals without indexing, so no dynamic-table state is shared with the peer
 * and any SETTINGS_HEADER_TABLE_SIZE (even 0) works.
 */

/** `literal without indexing` (RFC 7541 section 6.2.2) of a raw octet string `value`. */
function literalValue(value: string): Buffer {
  const bytes = Buffer.from(value, 'latin1');
  if (bytes.length > 127) throw new Error('literal too long for a one-octet length');
  return Buffer.concat([Buffer.from([bytes.length]), bytes]);
}

/** A literal field without indexing with a new (literal) name. */
function literalField(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0x00]), literalValue(name), literalValue(value)]);
}

const STATUS_200 = Buffer.from([0x88]);
/** `content-type: application/grpc`, name from static index 31 (4-bit prefix: 0x0f then 16). */
const CONTENT_TYPE_GRPC = Buffer.concat([Buffer.from([0x0f, 0x10]), literalValue('application/grpc')]);

/** `:status 200` and `content-type: application/grpc`. */
export const RESPONSE_HEADERS_BLOCK = Buffer.concat([STATUS_200, CONTENT_TYPE_GRPC]);
/** Trailers `grpc-status: 0`. */
export const OK_TRAILERS_BLOCK = literalField('grpc-status', '0');
const GRPC_FRAME_PREFIX = 5;
/** grpc-message is cut to this many octets (after percent-encoding) so a block fits any frame. */
const MAX_GRPC_MESSAGE = 120;

/** A complete HEADERS frame (END_HEADERS; END_STREAM when `endStream`). */
export function headersFrame(streamId: number, block: Buffer, endStream: boolean): Buffer {
  return frame(FRAME_HEADERS, FLAG_END_HEADERS | (endStream ? FLAG_END_STREAM : 0), streamId, block);
}

/** `message` with its 5-octet gRPC length prefix (uncompressed). */
export function grpcFramed(message: Uint8Array): Buffer {
  const framed = Buffer.allocUnsafe(GRPC_FRAME_PREFIX + message.length);
  framed[0] = 0;
  framed.writeUInt32BE(message.length, 1);
  framed.set(message, GRPC_FRAME_PREFIX);
  return framed;
}

/**
 * The whole successful unary response in one Buffer, for one socket write: HEADERS (`:status
 * 200`, content type), one DATA frame with the length-prefixed message, HEADERS trailers
 * (`grpc-status: 0`, END_STREAM). The caller checks that the DATA payload (`message.length + 5`)
 * fits the peer's frame size and flow-control windows.
 */
export function unaryOkResponse(streamId: number, message: Uint8Array): Buffer {
  const dataLength = GRPC_FRAME_PREFIX + message.length;
  const headersEnd = FRAME_HEADER_SIZE + RESPONSE_HEADERS_BLOCK.length;
  const dataEnd = headersEnd + FRAME_HEADER_SIZE + dataLength;
  const bytes = Buffer.allocUnsafe(dataEnd + FRAME_HEADER_SIZE + OK_TRAILERS_BLOCK.length);
  writeFrameHeader(bytes, 0, RESPONSE_HEADERS_BLOCK.length, FRAME_HEADERS, FLAG_END_HEADERS, streamId);
  RESPONSE_HEADERS_BLOCK.copy(bytes, FRAME_HEADER_SIZE);
  writeFrameHeader(bytes, headersEnd, dataLength, FRAME_DATA, 0, streamId);
  const prefix = headersEnd + FRAME_HEADER_SIZE;
  bytes[prefix] = 0;
  bytes.writeUInt32BE(message.length, prefix + 1);
  bytes.set(message, prefix + GRPC_FRAME_PREFIX);
  writeFrameHeader(
    bytes,
    dataEnd,
    OK_TRAILERS_BLOCK.length,
    FRAME_HEADERS,
    FLAG_END_HEADERS | FLAG_END_STREAM,
    streamId,
  );
  OK_TRAILERS_BLOCK.copy(bytes, dataEnd + FRAME_HEADER_SIZE);
  return bytes;
}

/**
 * Percent-encodes a grpc-message as the gRPC HTTP/2 protocol asks (octets outside printable ASCII,
 * and `%`, as %XX of their UTF-8), cut to a bounded length (never inside a %XX).
 */
export function grpcMessage(text: string): string {
  let encoded = '';
  for (const octet of Buffer.from(text, 'utf8')) {
    const piece =
      octet >= 0x20 && octet <= 0x7e && octet !== 0x25
        ? String.fromCharCode(octet)
        : `%${octet.toString(16).toUpperCase().padStart(2, '0')}`;
    if (encoded.length + piece.length > MAX_GRPC_MESSAGE) break;
    encoded += piece;
  }
  return encoded;
}

/**
 * A trailers-only gRPC error (one HEADERS frame with END_STREAM): `:status 200`, content type,
 * `grpc-status` and a percent-encoded `grpc-message`. Envoy's ext_authz turns any non-OK status
 * into its `status_on_error`: a failure is never an allow.
 */
export function trailersOnlyError(streamId: number, grpcStatus: number, message: string): Buffer {
  const block = Buffer.concat([
    RESPONSE_HEADERS_BLOCK,
    literalField('grpc-status', String(grpcStatus)),
    literalField('grpc-message', grpcMessage(message)),
  ]);
  return headersFrame(streamId, block, true);
}

/** `:status 415` (not a gRPC request), END_STREAM; `:status` from static index 8 (0x08). */
export function unsupportedMediaType(streamId: number): Buffer {
  return headersFrame(streamId, Buffer.concat([Buffer.from([0x08]), literalValue('415')]), true);
}

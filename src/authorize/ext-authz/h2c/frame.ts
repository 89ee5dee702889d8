/**
 * HTTP/2 framing constants and small frame builders (RFC 9113 sections 4, 6, 7), for the h2c
 * Check server. Builders return one Buffer per frame so callers can batch them into one write.
 */

/** The client connection preface (RFC 9113 section 3.4). */
export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
export const FRAME_HEADER_SIZE = 9;
/** SETTINGS_MAX_FRAME_SIZE's initial value, and the largest frame we accept (we never raise it). */
export const DEFAULT_MAX_FRAME_SIZE = 16_384;
/** Largest legal SETTINGS_MAX_FRAME_SIZE (2^24 - 1). */
export const MAX_ALLOWED_FRAME_SIZE = 16_777_215;
/** Initial flow-control window of a connection and of each stream (RFC 9113 section 6.9.2). */
export const DEFAULT_WINDOW_SIZE = 65_535;
/** Largest flow-control window (2^31 - 1). */
export const MAX_WINDOW_SIZE = 0x7fffffff;

/** Frame types (RFC 9113 section 6). */
export const FRAME_DATA = 0x0;
export const FRAME_HEADERS = 0x1;
export const FRAME_PRIORITY = 0x2;
export const FRAME_RST_STREAM = 0x3;
export const FRAME_SETTINGS = 0x4;
export const FRAME_PUSH_PROMISE = 0x5;
export const FRAME_PING = 0x6;
export const FRAME_GOAWAY = 0x7;
export const FRAME_WINDOW_UPDATE = 0x8;
export const FRAME_CONTINUATION = 0x9;

/** Frame flags. */
export const FLAG_END_STREAM = 0x1;
export const FLAG_ACK = 0x1;
export const FLAG_END_HEADERS = 0x4;
export const FLAG_PADDED = 0x8;
export const FLAG_PRIORITY = 0x20;

/** Error codes (RFC 9113 section 7). */
export const NO_ERROR = 0x0;
export const PROTOCOL_ERROR = 0x1;
export const INTERNAL_ERROR = 0x2;
export const FLOW_CONTROL_ERROR = 0x3;
export const STREAM_CLOSED = 0x5;
export const FRAME_SIZE_ERROR = 0x6;
export const REFUSED_STREAM = 0x7;
export const CANCEL = 0x8;
export const COMPRESSION_ERROR = 0x9;
export const ENHANCE_YOUR_CALM = 0xb;

/** SETTINGS parameters (RFC 9113 section 6.5.2). */
export const SETTINGS_HEADER_TABLE_SIZE = 0x1;
export const SETTINGS_ENABLE_PUSH = 0x2;
export const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
export const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
export const SETTINGS_MAX_FRAME_SIZE = 0x5;
export const SETTINGS_MAX_HEADER_LIST_SIZE = 0x6;

/**
 * A connection error (RFC 9113 section 5.4.1): the connection answers GOAWAY with `code` and
 * closes. The message is for the log; it never carries header values.
 */
export class H2ConnectionError extends Error {
  override readonly name = 'H2ConnectionError';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** Writes a 9-octet frame header at `offset` of `target`. */
export function writeFrameHeader(
  target: Buffer,
  offset: number,
  length: number,
  type: number,
  flags: number,
  streamId: number,
): void {
  target[offset] = length >>> 16;
  target[offset + 1] = (length >>> 8) & 0xff;
  target[offset + 2] = length & 0xff;
  target[offset + 3] = type;
  target[offset + 4] = flags;
  target.writeUInt32BE(streamId & MAX_WINDOW_SIZE, offset + 5);
}

/** One frame with `payload` copied after its header. */
export function frame(type: number, flags: number, streamId: number, payload: Uint8Array): Buffer {
  const bytes = Buffer.allocUnsafe(FRAME_HEADER_SIZE + payload.length);
  writeFrameHeader(bytes, 0, payload.length, type, flags, streamId);
  bytes.set(payload, FRAME_HEADER_SIZE);
  return bytes;
}

/** A SETTINGS frame carrying `settings` as (identifier, value) pairs. */
export function settingsFrame(settings: readonly (readonly [number, number])[]): Buffer {
  const payload = Buffer.allocUnsafe(settings.length * 6);
  settings.forEach(([id, value], index) => {
    payload.writeUInt16BE(id, index * 6);
    payload.writeUInt32BE(value, index * 6 + 2);
  });
  return frame(FRAME_SETTINGS, 0, 0, payload);
}

/** The SETTINGS acknowledgement. */
export const SETTINGS_ACK = frame(FRAME_SETTINGS, FLAG_ACK, 0, Buffer.alloc(0));

/** A 4-octet frame (WINDOW_UPDATE increment or RST_STREAM code). */
function uint32Frame(type: number, streamId: number, value: number): Buffer {
  const bytes = Buffer.allocUnsafe(FRAME_HEADER_SIZE + 4);
  writeFrameHeader(bytes, 0, 4, type, 0, streamId);
  bytes.writeUInt32BE(value >>> 0, FRAME_HEADER_SIZE);
  return bytes;
}

/** WINDOW_UPDATE granting `increment` more octets on `streamId` (0: the connection). */
export const windowUpdateFrame = (streamId: number, increment: number): Buffer =>
  uint32Frame(FRAME_WINDOW_UPDATE, streamId, increment);

/** RST_STREAM closing `streamId` with `code`. */
export const rstStreamFrame = (streamId: number, code: number): Buffer =>
  uint32Frame(FRAME_RST_STREAM, streamId, code);

/** GOAWAY: the last stream we processed, the error code, and a short ASCII reason. */
export function goawayFrame(lastStreamId: number, code: number, reason: string): Buffer {
  const debug = Buffer.from(reason.slice(0, 200), 'latin1');
  const payload = Buffer.allocUnsafe(8 + debug.length);
  payload.writeUInt32BE(lastStreamId & MAX_WINDOW_SIZE, 0);
  payload.writeUInt32BE(code, 4);
  debug.copy(payload, 8);
  return frame(FRAME_GOAWAY, 0, 0, payload);
}

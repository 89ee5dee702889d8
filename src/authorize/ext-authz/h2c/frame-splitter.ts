import {
  CLIENT_PREFACE,
  DEFAULT_MAX_FRAME_SIZE,
  FRAME_HEADER_SIZE,
  FRAME_SIZE_ERROR,
  H2ConnectionError,
  PROTOCOL_ERROR,
} from './frame.js';

/** Receives each complete frame; `payload` is only valid during the call unless kept by reference. */
export type FrameHandler = (type: number, flags: number, streamId: number, payload: Buffer) => void;

/**
 * Cuts a client's byte stream into the connection preface and HTTP/2 frames (RFC 9113 sections
 * 3.4 and 4.1). Bytes arrive in arbitrary chunks; only an incomplete tail is copied and kept.
 * Throws `H2ConnectionError` for a wrong preface (PROTOCOL_ERROR) or a frame longer than
 * `maxFrameSize` (FRAME_SIZE_ERROR). Frames are handed over synchronously in order; a handler
 * that throws stops the splitting.
 */
export class FrameSplitter {
  private tail: Buffer | undefined;
  private prefaceSeen = false;

  constructor(private readonly maxFrameSize = DEFAULT_MAX_FRAME_SIZE) {}

  /** Bytes held back waiting for the rest of a frame. */
  get pendingBytes(): number {
    return this.tail?.length ?? 0;
  }

  push(chunk: Buffer, onFrame: FrameHandler): void {
    const bytes = this.tail === undefined ? chunk : Buffer.concat([this.tail, chunk]);
    this.tail = undefined;
    let pos = 0;
    if (!this.prefaceSeen) {
      const available = Math.min(bytes.length, CLIENT_PREFACE.length);
      if (bytes.compare(CLIENT_PREFACE, 0, available, 0, available) !== 0) {
        throw new H2ConnectionError(PROTOCOL_ERROR, 'not an HTTP/2 client preface');
      }
      if (available < CLIENT_PREFACE.length) {
        this.tail = bytes;
        return;
      }
      this.prefaceSeen = true;
      pos = CLIENT_PREFACE.length;
    }
    while (bytes.length - pos >= FRAME_HEADER_SIZE) {
      const length = (bytes[pos]! << 16) | (bytes[pos + 1]! << 8) | bytes[pos + 2]!;
      if (length > this.maxFrameSize) {
        throw new H2ConnectionError(FRAME_SIZE_ERROR, `frame of ${length} octets over the maximum`);
      }
      const end = pos + FRAME_HEADER_SIZE + length;
      if (end > bytes.length) break;
      const type = bytes[pos + 3]!;
      const flags = bytes[pos + 4]!;
      const streamId = bytes.readUInt32BE(pos + 5) & 0x7fffffff;
      const payload = bytes.subarray(pos + FRAME_HEADER_SIZE, end);
      pos = end;
      onFrame(type, flags, streamId, payload);
    }
    if (pos < bytes.length) this.tail = bytes.subarray(pos);
  }
}

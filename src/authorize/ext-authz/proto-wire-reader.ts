/**
 * A cursor over protobuf wire bytes (https://protobuf.dev/programming-guides/encoding/) for the
 * hand-written CheckRequest reader: tags, lengths, UTF-8 strings and skipping of fields we do not
 * need. Every read checks its bounds and throws `ProtoWireError` on truncated or malformed input,
 * so a bad message becomes a gRPC INVALID_ARGUMENT instead of garbage.
 */

/** Malformed protobuf bytes (the reader never returns partial values). */
export class ProtoWireError extends Error {
  override readonly name = 'ProtoWireError';
}

/** Wire types of the protobuf encoding. */
export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LENGTH_DELIMITED = 2;
export const WIRE_START_GROUP = 3;
export const WIRE_END_GROUP = 4;
export const WIRE_FIXED32 = 5;

/** Nested groups deeper than this are refused (bounded recursion on hostile input). */
const MAX_GROUP_DEPTH = 32;

type SliceBuffer = Buffer & {
  utf8Slice(start: number, end: number): string;
  latin1Slice(start: number, end: number): string;
};

/**
 * Reads forward through `buffer[pos, limit)`. Entering a nested message narrows `limit` to its
 * end (`enter`) until `leave`, so no read can run past the message that contains it. Strings are decoded like protobufjs decodes a Buffer
 * (Node's UTF-8 decoder, invalid sequences become U+FFFD), so both readers agree on every input
 * Envoy can send. ASCII strings (the usual case) are substrings of the message decoded once as
 * latin1, several times cheaper than a decoder call per string.
 */
export class ProtoWireReader {
  pos: number;
  limit: number;
  private readonly buffer: SliceBuffer;
  /** The whole buffer as latin1 text, made on the first string read. */
  private latin1: string | undefined;

  constructor(buffer: Buffer, pos: number, limit: number) {
    this.buffer = buffer as SliceBuffer;
    this.pos = pos;
    this.limit = limit;
  }

  /** Reads a length prefix and narrows the limit to that nested message; returns the outer limit. */
  enter(): number {
    const outer = this.limit;
    this.limit = this.end();
    return outer;
  }

  /** Restores the limit `enter` returned, once the nested message has been read to its end. */
  leave(outer: number): void {
    this.limit = outer;
  }

  /** A varint as an unsigned 32-bit number (upper bits of longer varints are dropped, as protobufjs does). */
  uint32(): number {
    const buffer = this.buffer;
    let value = 0;
    let shift = 0;
    for (let index = 0; index < 10; index++) {
      if (this.pos >= this.limit) throw new ProtoWireError('truncated varint');
      const byte = buffer[this.pos++] as number;
      if (shift < 32) value |= (byte & 0x7f) << shift;
      shift += 7;
      if (byte < 0x80) return value >>> 0;
    }
    throw new ProtoWireError('varint longer than 10 bytes');
  }

  /** A field tag; field number 0 is invalid. */
  tag(): number {
    const tag = this.uint32();
    if (tag >>> 3 === 0) throw new ProtoWireError('field number 0');
    return tag;
  }

  /** A length prefix, returning the end offset of the value it announces (checked against the limit). */
  end(): number {
    const length = this.uint32();
    const end = this.pos + length;
    if (end > this.limit) throw new ProtoWireError('length past the end of the message');
    return end;
  }

  /** A length-delimited UTF-8 string. */
  string(): string {
    const end = this.end();
    const start = this.pos;
    this.pos = end;
    if (start === end) return '';
    const buffer = this.buffer;
    for (let index = start; index < end; index++) {
      if ((buffer[index] as number) >= 0x80) return buffer.utf8Slice(start, end);
    }
    this.latin1 ??= buffer.latin1Slice(0, buffer.length);
    return this.latin1.slice(start, end);
  }

  /** Skips one field value of `wireType` (groups included), for fields the caller does not need. */
  skip(wireType: number, depth = 0): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.uint32();
        return;
      case WIRE_FIXED64:
        this.advance(8);
        return;
      case WIRE_LENGTH_DELIMITED:
        this.pos = this.end();
        return;
      case WIRE_FIXED32:
        this.advance(4);
        return;
      case WIRE_START_GROUP:
        this.skipGroup(depth + 1);
        return;
      default:
        throw new ProtoWireError(`unexpected wire type ${wireType}`);
    }
  }

  private skipGroup(depth: number): void {
    if (depth > MAX_GROUP_DEPTH) throw new ProtoWireError('groups nested too deeply');
    for (;;) {
      const tag = this.tag();
      if ((tag & 7) === WIRE_END_GROUP) return;
      this.skip(tag & 7, depth);
    }
  }

  private advance(count: number): void {
    if (this.pos + count > this.limit) throw new ProtoWireError('truncated fixed-width value');
    this.pos += count;
  }
}

/** `bytes` as a Buffer over the same memory (no copy). */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

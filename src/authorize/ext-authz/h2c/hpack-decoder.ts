import { HpackError } from './hpack-error.js';
import { decodeHuffmanRecent } from './hpack-huffman.js';
import { HPACK_STATIC_TABLE } from './hpack-static-table.js';

/** Per-entry overhead counted in the dynamic table size (RFC 7541 section 4.1). */
const ENTRY_OVERHEAD = 32;
/** The default SETTINGS_HEADER_TABLE_SIZE (RFC 9113 section 6.5.2); we never advertise another. */
export const DEFAULT_HEADER_TABLE_SIZE = 4096;
const STATIC_COUNT = HPACK_STATIC_TABLE.length;
/** Integers above this are refused: no index, length or size we accept comes close. */
const MAX_INTEGER = 0x7fffffff;

type Utf8Buffer = Buffer & { latin1Slice(start: number, end: number): string };

/**
 * The HPACK decoder of one HTTP/2 connection (RFC 7541): static table, dynamic table with
 * eviction and size updates, Huffman strings. Names and values are returned as octet strings
 * (latin1: one char per byte), which keeps the table's size accounting exact; the Check path
 * compares only ASCII names and values. Any decoding error throws `HpackError`, after which the
 * connection must be closed (COMPRESSION_ERROR): the tables are out of step with the peer.
 */
export class HpackDecoder {
  /** Dynamic entries, oldest first; index 62 is the newest (the last element). */
  private entries: [string, string][] = [];
  private oldest = 0;
  private size = 0;
  private maxSize: number;

  constructor(private readonly settingsMaxSize = DEFAULT_HEADER_TABLE_SIZE) {
    this.maxSize = settingsMaxSize;
  }

  /** The current dynamic table size in octets (for tests). */
  get tableSize(): number {
    return this.size;
  }

  /** Number of dynamic entries (for tests). */
  get tableLength(): number {
    return this.entries.length - this.oldest;
  }

  /**
   * Decodes one complete header block (HEADERS plus CONTINUATION payloads, padding removed) from
   * `block[start, end)` and appends name, value, name, value, ... to `out`.
   */
  decode(block: Buffer, start: number, end: number, out: string[]): void {
    let fieldSeen = false;
    const reader: Reader = { pos: start, block: block as Utf8Buffer, end };
    while (reader.pos < end) {
      const first = block[reader.pos] as number;
      if (first & 0x80) {
        const [name, value] = this.entry(readInteger(reader, 7));
        out.push(name, value);
        fieldSeen = true;
      } else if (first & 0x40) {
        const [name, value] = this.literal(reader, 6);
        out.push(name, value);
        this.insert(name, value);
        fieldSeen = true;
      } else if (first & 0x20) {
        // RFC 7541 section 4.2: size updates come first in a block, never after a field.
        if (fieldSeen) throw new HpackError('dynamic table size update after a header field');
        const newSize = readInteger(reader, 5);
        if (newSize > this.settingsMaxSize) throw new HpackError('dynamic table size update above the limit');
        this.maxSize = newSize;
        this.evict(0);
      } else {
        // Literal without indexing (0000) or never indexed (0001): both 4-bit prefixes.
        const [name, value] = this.literal(reader, 4);
        out.push(name, value);
        fieldSeen = true;
      }
    }
  }

  private entry(index: number): readonly [string, string] {
    if (index === 0) throw new HpackError('header index 0');
    if (index <= STATIC_COUNT) return HPACK_STATIC_TABLE[index - 1] as readonly [string, string];
    const dynamicIndex = index - STATIC_COUNT;
    if (dynamicIndex > this.entries.length - this.oldest)
      throw new HpackError(`header index ${index} past the tables`);
    return this.entries[this.entries.length - dynamicIndex] as [string, string];
  }

  private literal(reader: Reader, prefixBits: number): [string, string] {
    const index = readInteger(reader, prefixBits);
    const name = index === 0 ? readString(reader) : this.entry(index)[0];
    return [name, readString(reader)];
  }

  private insert(name: string, value: string): void {
    const entrySize = name.length + value.length + ENTRY_OVERHEAD;
    if (entrySize > this.maxSize) {
      // RFC 7541 section 4.4: an entry larger than the table empties it and is not added.
      this.evict(this.maxSize);
      return;
    }
    this.evict(entrySize);
    this.entries.push([name, value]);
    this.size += entrySize;
  }

  /** Drops the oldest entries until `room` more octets fit under the maximum size. */
  private evict(room: number): void {
    while (this.size + room > this.maxSize && this.oldest < this.entries.length) {
      const [name, value] = this.entries[this.oldest] as [string, string];
      this.size -= name.length + value.length + ENTRY_OVERHEAD;
      this.oldest += 1;
    }
    if (this.oldest > 64 && this.oldest * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.oldest);
      this.oldest = 0;
    }
  }
}

interface Reader {
  pos: number;
  readonly block: Utf8Buffer;
  readonly end: number;
}

/** An HPACK integer with an N-bit prefix (RFC 7541 section 5.1). */
function readInteger(reader: Reader, prefixBits: number): number {
  const mask = (1 << prefixBits) - 1;
  let value = (reader.block[reader.pos++] as number) & mask;
  if (value < mask) return value;
  let shift = 0;
  for (;;) {
    if (reader.pos >= reader.end) throw new HpackError('truncated integer');
    const byte = reader.block[reader.pos++] as number;
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if (value > MAX_INTEGER) throw new HpackError('integer too large');
    if (byte < 0x80) return value;
  }
}

/** An HPACK string literal, raw or Huffman-coded (RFC 7541 section 5.2). */
function readString(reader: Reader): string {
  if (reader.pos >= reader.end) throw new HpackError('missing string literal');
  const huffman = ((reader.block[reader.pos] as number) & 0x80) !== 0;
  const length = readInteger(reader, 7);
  const start = reader.pos;
  const end = start + length;
  if (end > reader.end) throw new HpackError('string literal past the end of the block');
  reader.pos = end;
  if (huffman) return decodeHuffmanRecent(reader.block, start, end);
  return length === 0 ? '' : reader.block.latin1Slice(start, end);
}

/** The value of the first field named `name` in a flat [name, value, ...] list from `decode`. */
export function fieldValue(fields: readonly string[], name: string): string | undefined {
  for (let index = 0; index < fields.length; index += 2) {
    if (fields[index] === name) return fields[index + 1];
  }
  return undefined;
}

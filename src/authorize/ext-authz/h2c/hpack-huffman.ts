import { HpackError } from './hpack-error.js';

/**
 * Code length in bits of each symbol (0..255 the octets, 256 EOS) of the HPACK Huffman code
 * (RFC 7541 Appendix B, typed in from the RFC). The code is canonical: codes of one length are
 * consecutive in symbol order and follow the codes of the shorter lengths, so the lengths alone
 * define it (the unit test checks codes the RFC lists and the Kraft sum).
 */
export const HUFFMAN_CODE_LENGTHS: readonly number[] = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28,
  28, 28, 28, 28, 28, 6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7,
  8, 15, 6, 12, 10, 13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19,
  13, 14, 6, 15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13,
  28, 20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21,
  22, 23, 22, 23, 23, 24, 22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23,
  22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, 26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25,
  25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, 30,
];

const EOS = 256;
const MAX_CODE_LENGTH = 30;
const FAST_BITS = 8;

/** The canonical code: per length, the first code, how many codes and where their symbols start. */
interface CanonicalCode {
  readonly codes: readonly number[];
  readonly first: Int32Array;
  readonly count: Int32Array;
  readonly offset: Int32Array;
  readonly symbols: Uint16Array;
  /** For each 8-bit prefix: (symbol << 4) | length when a code of <= 8 bits starts it, else 0. */
  readonly fast: Uint16Array;
}

function buildCanonicalCode(lengths: readonly number[]): CanonicalCode {
  const order = lengths.map((_, symbol) => symbol).sort((a, b) => lengths[a]! - lengths[b]! || a - b);
  const codes: number[] = new Array<number>(lengths.length).fill(0);
  const first = new Int32Array(MAX_CODE_LENGTH + 2).fill(-1);
  const count = new Int32Array(MAX_CODE_LENGTH + 2);
  const offset = new Int32Array(MAX_CODE_LENGTH + 2);
  const symbols = new Uint16Array(order.length);
  let code = 0;
  let previous = lengths[order[0]!]!;
  order.forEach((symbol, index) => {
    const length = lengths[symbol]!;
    code *= 2 ** (length - previous);
    previous = length;
    if (first[length] === -1) {
      first[length] = code;
      offset[length] = index;
    }
    count[length] = count[length]! + 1;
    codes[symbol] = code;
    symbols[index] = symbol;
    code += 1;
  });
  const fast = new Uint16Array(1 << FAST_BITS);
  order.forEach((symbol) => {
    const length = lengths[symbol]!;
    if (length > FAST_BITS) return;
    const base = codes[symbol]! << (FAST_BITS - length);
    for (let fill = 0; fill < 1 << (FAST_BITS - length); fill++) fast[base + fill] = (symbol << 4) | length;
  });
  return { codes, first, count, offset, symbols, fast };
}

/** The HPACK Huffman code, built once from `HUFFMAN_CODE_LENGTHS`. */
export const HUFFMAN = buildCanonicalCode(HUFFMAN_CODE_LENGTHS);

type Latin1Buffer = Buffer & { latin1Slice(start: number, end: number): string };

let scratch = Buffer.allocUnsafe(256) as Latin1Buffer;

/** The bit of `source` at absolute bit position `bit` (MSB first). */
const bitAt = (source: Uint8Array, bit: number): number =>
  ((source[bit >>> 3] as number) >>> (7 - (bit & 7))) & 1;

/**
 * Decodes the Huffman-coded string in `source[start, end)` as octets (one char per byte, latin1),
 * per RFC 7541 section 5.2: EOS inside the string, padding longer than 7 bits or padding that is
 * not all ones are errors.
 */
export function decodeHuffman(source: Uint8Array, start: number, end: number): string {
  const capacity = Math.ceil(((end - start) * 8) / 5);
  if (scratch.length < capacity)
    scratch = Buffer.allocUnsafe(Math.max(capacity, scratch.length * 2)) as Latin1Buffer;
  const { fast, first, count, offset, symbols } = HUFFMAN;
  let written = 0;
  let bit = start * 8;
  const endBit = end * 8;
  while (bit < endBit) {
    const remaining = endBit - bit;
    // The next 8 bits, padded with ones past the end (EOS's prefix is all ones).
    let peek = 0;
    for (let index = 0; index < FAST_BITS; index++) {
      peek = (peek << 1) | (index < remaining ? bitAt(source, bit + index) : 1);
    }
    const entry = fast[peek] as number;
    if (entry !== 0 && (entry & 15) <= remaining) {
      scratch[written++] = entry >>> 4;
      bit += entry & 15;
      continue;
    }
    if (remaining < FAST_BITS) {
      if (peek !== 0xff) throw new HpackError('Huffman padding is not a prefix of EOS');
      break;
    }
    let code = peek;
    let length = FAST_BITS;
    for (;;) {
      if (length === MAX_CODE_LENGTH || bit + length >= endBit) {
        throw new HpackError('Huffman string ends inside a code or with padding over 7 bits');
      }
      code = code * 2 + bitAt(source, bit + length);
      length += 1;
      const firstCode = first[length] as number;
      if (firstCode >= 0 && code - firstCode < (count[length] as number)) {
        const symbol = symbols[(offset[length] as number) + code - firstCode] as number;
        if (symbol === EOS) throw new HpackError('EOS inside a Huffman string');
        scratch[written++] = symbol;
        bit += length;
        break;
      }
    }
  }
  return scratch.latin1Slice(0, written);
}

/** How many recent Huffman strings `decodeHuffmanRecent` remembers, and the longest it keeps. */
const RECENT_SLOTS = 8;
const RECENT_MAX_BYTES = 256;

/** One remembered decode: the coded octets and what they decoded to. */
interface RecentDecode {
  readonly coded: Uint8Array;
  readonly text: string;
}

const recent: (RecentDecode | undefined)[] = new Array<RecentDecode | undefined>(RECENT_SLOTS);
let nextSlot = 0;

function sameOctets(coded: Uint8Array, source: Uint8Array, start: number): boolean {
  for (let index = 0; index < coded.length; index++) {
    if (coded[index] !== source[start + index]) return false;
  }
  return true;
}

/**
 * `decodeHuffman`, remembering the last few strings it decoded: the same coded octets give the
 * same text without decoding them again. Envoy's HPACK encoder sends some values as Huffman
 * literals on every request, never indexed (the `:path` of each ext_authz Check), and decoding
 * them bit by bit was a few percent of the Check server's CPU. Comparing octets costs less.
 * Errors are never remembered, so malformed input throws every time.
 */
export function decodeHuffmanRecent(source: Uint8Array, start: number, end: number): string {
  const length = end - start;
  for (let slot = 0; slot < RECENT_SLOTS; slot++) {
    const entry = recent[slot];
    if (entry !== undefined && entry.coded.length === length && sameOctets(entry.coded, source, start))
      return entry.text;
  }
  const text = decodeHuffman(source, start, end);
  if (length <= RECENT_MAX_BYTES) {
    // A copy: `source` may be a view into a buffer that is reused for later reads.
    recent[nextSlot] = { coded: new Uint8Array(source.subarray(start, end)), text };
    nextSlot = (nextSlot + 1) % RECENT_SLOTS;
  }
  return text;
}

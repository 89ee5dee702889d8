// decodeHuffmanRecent (the Huffman decoder with a memo of recent strings) against the plain decoder:
// the same text for every input, repeated or not, never a stale answer when the octets under a
// reused buffer change, and malformed input an error every time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HpackError } from '../../../../../src/authorize/ext-authz/h2c/hpack-error.js';
import {
  decodeHuffman,
  decodeHuffmanRecent,
  HUFFMAN,
  HUFFMAN_CODE_LENGTHS,
} from '../../../../../src/authorize/ext-authz/h2c/hpack-huffman.js';
import { Random } from '../codec-generators.js';

/** Huffman-codes latin1 `text` (RFC 7541 section 5.2: codes MSB first, padded with ones). */
function huffmanCode(text: string): Buffer {
  let bits = '';
  for (const char of text) {
    const symbol = char.charCodeAt(0);
    bits += (HUFFMAN.codes[symbol] as number)
      .toString(2)
      .padStart(HUFFMAN_CODE_LENGTHS[symbol] as number, '0');
  }
  bits = bits.padEnd(Math.ceil(bits.length / 8) * 8, '1');
  const out = Buffer.alloc(bits.length / 8);
  for (let index = 0; index < out.length; index++)
    out[index] = parseInt(bits.slice(index * 8, index * 8 + 8), 2);
  return out;
}

test("Huffman with a memo: the plain decoder's text for 2,000 strings drawn from a small set", () => {
  const random = new Random(7);
  // Few distinct strings, many repeats and several of one length: hits, misses and evictions.
  const texts = Array.from({ length: 24 }, (_, index) =>
    Array.from({ length: 4 + (index % 5) * 10 }, () => String.fromCharCode(32 + random.int(95))).join(''),
  );
  texts.push('/envoy.service.auth.v3.Authorization/Check', '', '\u00ff\u0000\u00e9');
  for (let round = 0; round < 2000; round++) {
    const text = random.pick(texts);
    const coded = huffmanCode(text);
    // At an offset inside a larger buffer, as a header block carries it.
    const block = Buffer.concat([Buffer.from([0x11, 0x22]), coded, Buffer.from([0x33])]);
    const decoded = decodeHuffmanRecent(block, 2, 2 + coded.length);
    assert.equal(decoded, text, `round ${round}`);
    assert.equal(decoded, decodeHuffman(block, 2, 2 + coded.length));
  }
});

test('Huffman with a memo: octets changed in place under a reused buffer decode afresh', () => {
  const first = huffmanCode('/envoy.service.auth.v3.Authorization/Check');
  const second = huffmanCode('/envoy.service.auth.v3.Authorization/Chack');
  assert.equal(first.length, second.length);
  const buffer = Buffer.from(first);
  assert.equal(decodeHuffmanRecent(buffer, 0, buffer.length), '/envoy.service.auth.v3.Authorization/Check');
  second.copy(buffer);
  assert.equal(decodeHuffmanRecent(buffer, 0, buffer.length), '/envoy.service.auth.v3.Authorization/Chack');
});

test('Huffman with a memo: malformed input throws every time, never remembered', () => {
  // 0x00 0x00: a complete code for '0' (00000) then padding that is not all ones.
  const malformed = Buffer.from([0x00, 0x00]);
  for (let attempt = 0; attempt < 3; attempt++) {
    assert.throws(() => decodeHuffmanRecent(malformed, 0, malformed.length), HpackError);
  }
});

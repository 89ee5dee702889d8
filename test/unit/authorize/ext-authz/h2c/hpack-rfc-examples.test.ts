// The HPACK decoder on the examples of RFC 7541 Appendix C (requests and responses, raw and
// Huffman, with the dynamic table contents and sizes the RFC lists after each block), the
// canonical Huffman code on codes the RFC's Appendix B lists, and malformed blocks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HpackDecoder } from '../../../../../src/authorize/ext-authz/h2c/hpack-decoder.js';
import { HpackError } from '../../../../../src/authorize/ext-authz/h2c/hpack-error.js';
import { HUFFMAN, HUFFMAN_CODE_LENGTHS } from '../../../../../src/authorize/ext-authz/h2c/hpack-huffman.js';

function decode(decoder: HpackDecoder, hex: string): [string, string][] {
  const block = Buffer.from(hex.replace(/\s+/g, ''), 'hex');
  const out: string[] = [];
  decoder.decode(block, 0, block.length, out);
  const pairs: [string, string][] = [];
  for (let index = 0; index < out.length; index += 2) pairs.push([out[index]!, out[index + 1]!]);
  return pairs;
}

test('Huffman: a complete canonical code with the codes RFC 7541 Appendix B lists', () => {
  const kraft = HUFFMAN_CODE_LENGTHS.reduce((sum, length) => sum + 2 ** -length, 0);
  assert.equal(kraft, 1);
  const listed: [number, number][] = [
    [0, 0x1ff8],
    [1, 0x7fffd8],
    [10, 0x3ffffffc],
    [32, 0x14],
    [48, 0x0],
    [97, 0x3],
    [88, 0xfc],
    [127, 0xffffffc],
    [153, 0x1fffdc],
    [203, 0x7ffffde],
    [255, 0x3ffffee],
    [256, 0x3fffffff],
  ];
  for (const [symbol, code] of listed) assert.equal(HUFFMAN.codes[symbol], code, `symbol ${symbol}`);
});

test('C.2: single literal and indexed fields', () => {
  const indexed = new HpackDecoder();
  assert.deepEqual(decode(indexed, '400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572'), [
    ['custom-key', 'custom-header'],
  ]);
  assert.equal(indexed.tableSize, 55);
  const plain = new HpackDecoder();
  assert.deepEqual(decode(plain, '040c 2f73 616d 706c 652f 7061 7468'), [[':path', '/sample/path']]);
  assert.deepEqual(decode(plain, '1008 7061 7373 776f 7264 0673 6563 7265 74'), [['password', 'secret']]);
  assert.deepEqual(decode(plain, '82'), [[':method', 'GET']]);
  assert.equal(plain.tableSize, 0);
});

const REQUEST_1 = [
  [':method', 'GET'],
  [':scheme', 'http'],
  [':path', '/'],
  [':authority', 'www.example.com'],
];
const REQUEST_2 = [...REQUEST_1, ['cache-control', 'no-cache']];
const REQUEST_3 = [
  [':method', 'GET'],
  [':scheme', 'https'],
  [':path', '/index.html'],
  [':authority', 'www.example.com'],
  ['custom-key', 'custom-value'],
];

for (const [section, blocks] of [
  [
    'C.3: requests without Huffman',
    [
      '8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
      '8286 84be 5808 6e6f 2d63 6163 6865',
      '8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65',
    ],
  ],
  [
    'C.4: requests with Huffman',
    [
      '8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff',
      '8286 84be 5886 a8eb 1064 9cbf',
      '8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf',
    ],
  ],
] as const) {
  test(`${section}, sharing one dynamic table`, () => {
    const decoder = new HpackDecoder();
    assert.deepEqual(decode(decoder, blocks[0]), REQUEST_1);
    assert.equal(decoder.tableSize, 57);
    assert.deepEqual(decode(decoder, blocks[1]), REQUEST_2);
    assert.equal(decoder.tableSize, 110);
    assert.deepEqual(decode(decoder, blocks[2]), REQUEST_3);
    assert.equal(decoder.tableSize, 164);
    assert.equal(decoder.tableLength, 3);
  });
}

const DATE_1 = 'Mon, 21 Oct 2013 20:13:21 GMT';
const DATE_2 = 'Mon, 21 Oct 2013 20:13:22 GMT';
const COOKIE = 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1';
const RESPONSE_1 = [
  [':status', '302'],
  ['cache-control', 'private'],
  ['date', DATE_1],
  ['location', 'https://www.example.com'],
];
const RESPONSE_2 = [[':status', '307'], ...RESPONSE_1.slice(1)];
const RESPONSE_3 = [
  [':status', '200'],
  ['cache-control', 'private'],
  ['date', DATE_2],
  ['location', 'https://www.example.com'],
  ['content-encoding', 'gzip'],
  ['set-cookie', COOKIE],
];

for (const [section, blocks] of [
  [
    'C.5: responses without Huffman',
    [
      '4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
      '4803 3330 37c1 c0bf',
      '88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31',
    ],
  ],
  [
    'C.6: responses with Huffman',
    [
      '4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3',
      '4883 640e ff c1 c0 bf',
      '88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07',
    ],
  ],
] as const) {
  test(`${section}: a 256-octet table evicts as the RFC shows`, () => {
    const decoder = new HpackDecoder(256);
    // The RFC's encoder uses a 256-octet table; its decoder starts with the SETTINGS maximum.
    decode(decoder, '3fe101');
    assert.deepEqual(decode(decoder, blocks[0]), RESPONSE_1);
    assert.equal(decoder.tableSize, 222);
    assert.deepEqual(decode(decoder, blocks[1]), RESPONSE_2);
    assert.equal(decoder.tableSize, 222);
    assert.equal(decoder.tableLength, 4);
    assert.deepEqual(decode(decoder, blocks[2]), RESPONSE_3);
    assert.equal(decoder.tableSize, 215);
    assert.equal(decoder.tableLength, 3);
  });
}

test('malformed blocks are HpackErrors', () => {
  const cases: [string, string][] = [
    ['80', 'index 0'],
    ['be', 'index past the (empty) dynamic table'],
    ['ff', 'truncated integer'],
    ['ff ff ff ff ff ff 0f', 'integer too large'],
    ['40 05 61 62', 'string past the end'],
    ['40', 'missing name string'],
    ['40 81 ff', 'Huffman: padding longer than 7 bits'],
    ['40 81 00', 'Huffman: padding not all ones'],
    ['40 84 ff ff ff ff', 'Huffman: EOS inside the string'],
    ['82 20', 'size update after a field'],
    ['3f e2 1f', 'size update above the SETTINGS maximum'],
  ];
  for (const [hex, why] of cases) {
    assert.throws(() => decode(new HpackDecoder(), hex), HpackError, why);
  }
});

test('a size update evicts, an oversized entry empties the table', () => {
  const decoder = new HpackDecoder();
  decode(decoder, '400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572');
  assert.equal(decoder.tableLength, 1);
  decode(decoder, '20');
  assert.equal(decoder.tableSize, 0);
  assert.throws(() => decode(decoder, 'be'), HpackError);
  decode(decoder, '3f 19'); // back to 56 octets
  decode(decoder, '400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572');
  assert.equal(decoder.tableSize, 55);
  decode(decoder, '4003 6162 6303 6465 66'); // abc: def is 38 octets; the first entry is evicted
  assert.equal(decoder.tableLength, 1);
  assert.deepEqual(decode(decoder, 'be'), [['abc', 'def']]);
});

// shortHash names routes and clusters: its output must stay the first 16 hex digits of SHA-256
// (ids never change across versions), whatever the input's characters, and fullHash the whole
// digest. Checked against node:crypto's Hash object over inputs that exercise every code path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { fullHash, shortHash } from '../../../src/shared/hash.js';

const sha256Hex = (input: string | Uint8Array): string => createHash('sha256').update(input).digest('hex');

test('shortHash is the first 16 hex digits of SHA-256, for strings of any characters and bytes', () => {
  const inputs: (string | Uint8Array)[] = [
    '',
    'abc',
    '{"from":"https://a.example.com","prefix":"/","to":["http://10.0.0.1:8080,3"]}',
    'é ü 漢字 😀 \u0000 \ud800',
    'x'.repeat(100_000),
    new Uint8Array(),
    Uint8Array.from([0, 255, 128, 1]),
  ];
  for (let index = 0; index < 200; index++)
    inputs.push(randomBytes(index), randomBytes(index).toString('latin1'));
  for (const input of inputs) {
    const expected = sha256Hex(input);
    assert.equal(shortHash(input), expected.slice(0, 16), JSON.stringify(String(input).slice(0, 40)));
    assert.match(shortHash(input), /^[0-9a-f]{16}$/);
    assert.equal(fullHash(input), expected);
  }
});

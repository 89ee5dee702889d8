import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { contentHash64, hashLanes, hex64, lastLanes } from '../../../src/shared/fast-hash.js';

test('contentHash64: its first lane is MurmurHash3 x86 32-bit with seed 0x9747b28c', () => {
  // Published test vectors for that seed.
  assert.equal(contentHash64(Buffer.from('Hello, world!')).slice(0, 8), '24884cba');
  assert.equal(
    contentHash64(Buffer.from('The quick brown fox jumps over the lazy dog')).slice(0, 8),
    '2fa826cd',
  );
  assert.match(contentHash64(new Uint8Array()), /^[0-9a-f]{16}$/);
});

test('contentHash64: every tail length, one flipped bit changes it, no collision in 100,000 inputs', () => {
  const base = randomBytes(64);
  for (let length = 0; length <= 16; length++) {
    const bytes = base.subarray(0, length);
    assert.equal(contentHash64(bytes), contentHash64(Buffer.from(bytes)), 'deterministic, view or copy');
    if (length > 0) {
      const flipped = Buffer.from(bytes);
      flipped[length - 1] = (flipped[length - 1] as number) ^ 1;
      assert.notEqual(contentHash64(flipped), contentHash64(bytes), `tail length ${length}`);
    }
  }
  // A range hashes exactly as the subarray would, at every start and tail length.
  for (let start = 0; start < 5; start++)
    for (let end = start; end <= start + 9; end++) {
      hashLanes(base, start, end);
      const ranged = hex64(lastLanes[0] as number, lastLanes[1] as number);
      assert.equal(ranged, contentHash64(base.subarray(start, end)), `bytes ${start} to ${end}`);
    }
  const seen = new Set<string>();
  for (let i = 0; i < 100_000; i++) seen.add(contentHash64(randomBytes(8 + (i % 40))));
  assert.equal(seen.size, 100_000);
});

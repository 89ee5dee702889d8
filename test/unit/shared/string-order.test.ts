// Sorting names by radix passes over their first eight code units, then comparing only ties, must
// give exactly what `Array.prototype.sort` gives, whatever the names share, however long they are.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sortedStrings, stringOrder } from '../../../src/shared/string-order.js';
import { radixOrder } from '../../../src/shared/radix-order.js';
import { seededRandom } from '../../support/seeded-random.js';

/** Random names over `alphabet`, 0 to `maxLength` code units, with many shared prefixes. */
function randomNames(seed: number, count: number, alphabet: string, maxLength: number): string[] {
  const random = seededRandom(seed);
  const pick = (): string => alphabet[Math.floor(random() * alphabet.length)] as string;
  const prefixes = Array.from({ length: 8 }, () =>
    Array.from({ length: Math.floor(random() * 10) }, pick).join(''),
  );
  return Array.from({ length: count }, () => {
    const prefix = prefixes[Math.floor(random() * prefixes.length)] as string;
    const rest = Array.from({ length: Math.floor(random() * maxLength) }, pick).join('');
    return (prefix + rest).slice(0, maxLength);
  });
}

test('host-like names sort as Array.prototype.sort sorts them', () => {
  const hosts = Array.from({ length: 3000 }, (_, i) => `r${(i * 7919) % 3001}.bench.test`);
  hosts.push(
    '*.example.com',
    'app.example.com',
    'api.example.com',
    'a',
    'ab',
    'abc.d',
    'xn--bcher-kva.example',
  );
  assert.deepEqual(sortedStrings(hosts), [...hosts].sort());
});

test('random names with shared prefixes, duplicates, NULs and Latin-1 sort as Array.prototype.sort', () => {
  for (const [seed, alphabet] of [
    [1, 'ab.'],
    [2, 'abcdefghij0123456789.-*'],
    [3, 'a\u0000b\u00ff\u0080'],
    [4, 'zZ'],
  ] as const) {
    const names = randomNames(seed, 2000, alphabet, 14);
    assert.deepEqual(sortedStrings(names), [...names].sort(), `seed ${seed}`);
  }
});

test('names sharing long prefixes, and one name repeated many times, sort stably as Array.prototype.sort', () => {
  const random = seededRandom(8);
  const shared = Array.from(
    { length: 4000 },
    (_, i) => `service-${'x'.repeat(i % 30)}${(i * 7919) % 4001}.corp.example.com`,
  );
  assert.deepEqual(sortedStrings(shared), [...shared].sort());
  // One host's many routes among others: equal names keep index order.
  const hosts = Array.from({ length: 3000 }, () =>
    random() < 0.5 ? 'app.example.com' : `h${Math.floor(random() * 50)}.example.com`,
  );
  const order = Array.from(stringOrder(hosts));
  const expected = hosts
    .map((name, index) => ({ name, index }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.index - b.index))
    .map(({ index }) => index);
  assert.deepEqual(order, expected);
  // Names that differ only by NULs the key's zero padding hides, in runs long enough to be radix-sorted.
  const nuls = Array.from({ length: 200 }, (_, i) => `abcdefgh${'\u0000'.repeat(i % 3)}`);
  assert.deepEqual(sortedStrings(nuls), [...nuls].sort());
});

test('names beyond Latin-1, and short lists, take the comparison sort and still sort right', () => {
  const wide = randomNames(5, 500, 'a\u0100\u4e16\ud83d\ude00b', 10);
  assert.deepEqual(sortedStrings(wide), [...wide].sort());
  const few = ['b', 'a', 'c'];
  assert.deepEqual(sortedStrings(few), ['a', 'b', 'c']);
  assert.deepEqual(few, ['b', 'a', 'c'], 'the input is not sorted in place');
  assert.deepEqual(sortedStrings([]), []);
});

test('radixOrder orders by the words as unsigned numbers, first word first, and is stable', () => {
  const random = seededRandom(6);
  const count = 5000;
  const high = Int32Array.from({ length: count }, () => (random() * 8) | 0);
  const low = Int32Array.from({ length: count }, () => (random() * 2 ** 32) | 0);
  low[0] = -1; // 0xffffffff unsigned: the largest low word
  const expected = Array.from({ length: count }, (_, i) => i).sort(
    (a, b) =>
      (high[a] as number) - (high[b] as number) ||
      ((low[a] as number) >>> 0) - ((low[b] as number) >>> 0) ||
      a - b,
  );
  assert.deepEqual(Array.from(radixOrder([high, low], count)), expected);
});

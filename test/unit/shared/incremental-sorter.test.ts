import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IncrementalSorter } from '../../../src/shared/incremental-sorter.js';

test('the incremental sorter always gives what a full sort gives, across changing sets', () => {
  const sorter = new IncrementalSorter();
  let seed = 7;
  const next = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  let names = new Set<string>();
  for (let round = 0; round < 60; round++) {
    // Keep most names, drop some, add some (including ones that sort between kept ones).
    const kept = [...names].filter(() => next() > 0.1);
    const added = Array.from({ length: Math.floor(next() * 30) }, () => `h${Math.floor(next() * 5000)}.test`);
    names = new Set([...kept, ...added, ...(round % 7 === 0 ? ['A', 'é', 'Z-upper'] : [])]);
    // Now and then an order sorted elsewhere (a cold build's radix sort) is remembered, and the
    // incremental sorts after it start from it.
    if (round % 5 === 3) sorter.remember([...names].sort());
    assert.deepEqual(sorter.sort(names), [...names].sort(), `round ${round}`);
  }
  assert.deepEqual(sorter.sort(new Set()), []);
  assert.deepEqual(
    sorter.sort(
      new Map([
        ['b', 1],
        ['a', 2],
      ]),
    ),
    ['a', 'b'],
  );
});

test('sortedValues gives the values in the order of their sorted keys, from a remembered or the last order', () => {
  const sorter = new IncrementalSorter();
  const hosts = (count: number, offset: number): Map<string, number> =>
    new Map(Array.from({ length: count }, (_, i) => [`r${(i * 7919 + offset) % 100_003}.test`, i]));
  // An order sorted elsewhere (a cold build's radix sort), then reloads from it.
  sorter.remember([...hosts(3000, 0).keys()].sort());
  for (const [round, entries] of [hosts(3000, 0), hosts(2500, 11), hosts(40, 5)].entries()) {
    const expected = [...entries.keys()].sort().map((key) => entries.get(key));
    assert.deepEqual(sorter.sortedValues(entries), expected, `round ${round}`);
  }
  assert.deepEqual(sorter.sort(new Set(['r1.test', 'a.test'])), ['a.test', 'r1.test']);
});

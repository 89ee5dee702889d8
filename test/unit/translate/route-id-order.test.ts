// Sorting routes by id with radix passes over their leading words must give exactly what a
// comparison sort of the id strings gives, ties included, and keep equal ids in route order.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { orderByRouteId, routeIdLead } from '../../../src/translate/route-id-order.js';
import { shortHash } from '../../../src/shared/hash.js';
import { seededRandom } from '../../support/seeded-random.js';

/** The reference: indexes sorted by id text, then index. */
function referenceOrder(ids: readonly string[]): number[] {
  return ids
    .map((id, index) => ({ id, index }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : a.index - b.index))
    .map(({ index }) => index);
}

function order(ids: readonly string[]): number[] {
  const leads = Int32Array.from(ids, routeIdLead);
  return Array.from(orderByRouteId(leads, (index) => ids[index] as string));
}

test('routeIdLead reads the leading 8 hex digits; unsigned, it orders as the text does', () => {
  assert.equal(routeIdLead('00000000ffffffff'), 0);
  assert.equal(routeIdLead('0000000aXXXXXXXX'), 10);
  assert.equal(routeIdLead('7fffffff00000000'), 0x7fffffff);
  assert.equal(routeIdLead('ffffffff00000000') >>> 0, 0xffffffff);
  assert.equal(routeIdLead('80000000deadbeef') >>> 0, 0x80000000);
  assert.ok(Number.isInteger(routeIdLead('c0ffee0000000000')), 'a 32-bit integer, not a float');
});

test('radix order equals the comparison sort: hash ids, shared leading words, equal ids, edge words', () => {
  const next = seededRandom(99);
  const hex = (digits: number): string =>
    Array.from({ length: digits }, () => Math.floor(next() * 16).toString(16)).join('');
  const ids: string[] = Array.from({ length: 3000 }, (_, i) => shortHash(`route ${i}`));
  // Ids sharing their leading word (ordered by their tails), duplicates, and the extreme words.
  for (let i = 0; i < 40; i++) ids.push(`${(ids[i] as string).slice(0, 8)}${hex(8)}`);
  for (let i = 0; i < 20; i++) ids.push(ids[Math.floor(next() * ids.length)] as string);
  ids.push('0000000000000000', 'ffffffffffffffff', '7fffffffffffffff', '8000000000000000');
  ids.push('ffffffffffffffff', '0000000000000000');
  for (let round = 0; round < 5; round++) {
    // Shuffle so equal ids land in different index orders.
    for (let i = ids.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [ids[i], ids[j]] = [ids[j] as string, ids[i] as string];
    }
    assert.deepEqual(order(ids), referenceOrder(ids), `round ${round}`);
  }
  assert.deepEqual(order([]), []);
  assert.deepEqual(order(['abcdef0123456789']), [0]);
});

// The splice check: a spliced document is compared with a full parse of its text made in a worker
// thread, by digests; this thread digests in slices and so keeps serving its event loop.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import jsYaml from 'js-yaml';
import { spliceAgreesWithFullParse } from '../../../src/config/splice-check.js';
import { routeListLayout, type SpliceBase } from '../../../src/config/yaml-splice.js';
import { fullParseDigests, valueDigest } from '../../../src/config/yaml-document-digest.js';

function configText(count: number, host = (index: number): string => `h${index}.example.com`): string {
  const items = Array.from(
    { length: count },
    (_, index) => `  - from: https://${host(index)}\n    to: http://127.0.0.1:${9000 + (index % 7)}\n`,
  );
  return `insecure_server: true\nroutes:\n${items.join('')}log_level: info\n`;
}

/** A base whose document is `document` (default: the text's own full parse). */
function baseOf(text: string, document?: Record<string, unknown>): SpliceBase {
  const list = routeListLayout(text);
  assert.ok(list);
  return { text, document: document ?? (jsYaml.load(text) as Record<string, unknown>), list };
}

test('a document equal to the full parse of its text agrees', async () => {
  assert.equal(await spliceAgreesWithFullParse(baseOf(configText(50))), true);
});

test('a differing route item, a differing top-level value, a missing item or an unparsable text disagree', async () => {
  const text = configText(20);
  const parsed = (): Record<string, unknown> => jsYaml.load(text) as Record<string, unknown>;
  const wrongItem = parsed();
  (wrongItem.routes as Record<string, unknown>[])[7] = { from: 'https://other.example.com', to: 'http://x' };
  assert.equal(await spliceAgreesWithFullParse(baseOf(text, wrongItem)), false, 'one item');
  const wrongTop = { ...parsed(), log_level: 'debug' };
  assert.equal(await spliceAgreesWithFullParse(baseOf(text, wrongTop)), false, 'a top-level value');
  const shorter = parsed();
  (shorter.routes as unknown[]).pop();
  assert.equal(await spliceAgreesWithFullParse(baseOf(text, shorter)), false, 'one item fewer');
  const broken = `${text}  - from: [unclosed\n`;
  assert.equal(await spliceAgreesWithFullParse(baseOf(text.replace(text, broken), parsed())), false);
});

test('digests tell apart what deep equality tells apart, and not key order', () => {
  const distinct: unknown[] = [
    0,
    -0,
    '0',
    null,
    'null',
    true,
    'true',
    [],
    {},
    [1, 2],
    [2, 1],
    NaN,
    Infinity,
    { a: 1 },
    { a: '1' },
  ];
  const digests = distinct.map(valueDigest);
  assert.equal(new Set(digests).size, distinct.length);
  assert.equal(valueDigest({ a: 1, b: [{ c: 2, d: 3 }] }), valueDigest({ b: [{ d: 3, c: 2 }], a: 1 }));
  const full = fullParseDigests('a: 1\nroutes:\n  - x: 1\n  - y: 2\n', 'routes');
  assert.deepEqual(full.items, [valueDigest({ x: 1 }), valueDigest({ y: 2 })]);
  assert.equal(full.rest, valueDigest({ a: 1 }));
});

test('checking 5,000 routes yields to the event loop between slices of digests', async () => {
  const base = baseOf(configText(5000, (index) => `slice-${index}.example.com`));
  let turns = 0;
  let running = true;
  const spin = (): void => {
    turns += 1;
    if (running) setImmediate(spin);
  };
  setImmediate(spin);
  const agrees = await spliceAgreesWithFullParse(base);
  running = false;
  assert.equal(agrees, true);
  // 5,000 fresh items at 256 per turn: at least 19 turns in which other callbacks ran.
  assert.ok(turns >= 19, `other callbacks ran in ${turns} turns`);
});

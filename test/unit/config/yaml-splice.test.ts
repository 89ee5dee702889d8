// The incremental YAML parse must be exactly a full parse, or decline: hundreds of random edits
// (inside items, whole items added, removed, replaced, top-level keys, comments, outdents, block
// scalars) are checked against js-yaml on the whole text, seeded so a failure reproduces.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seededRandom } from '../../support/seeded-random.js';
import { isDeepStrictEqual } from 'node:util';
import jsYaml from 'js-yaml';
import { routeListLayout, spliceParse, type SpliceBase } from '../../../src/config/yaml-splice.js';

function item(index: number, indent: string, variant: number): string {
  const lines = [
    `- from: https://r${index}.example.test`,
    `  to:`,
    `    - http://10.0.0.${index % 250}:8080,3`,
  ];
  if (variant % 3 === 0) lines.push('  # a comment inside the item', '  prefix: /api');
  if (variant % 4 === 1)
    lines.push('  set_request_headers:', '    X-Note: |', '      line one', '      line two');
  if (variant % 5 === 2) lines.push('', '  allow_public_unauthenticated_access: true');
  return lines.map((line) => (line === '' ? '' : indent + line)).join('\n') + '\n';
}

function documentText(count: number, indent: string, seed: number): string {
  const next = seededRandom(seed);
  const items = Array.from({ length: count }, (_, index) => item(index, indent, Math.floor(next() * 60)));
  return `insecure_server: true\n# routes below\nroutes:\n${items.join('')}# trailing comment\nlog_level: info\n`;
}

function base(text: string): SpliceBase {
  const list = routeListLayout(text);
  assert.ok(list, 'the generated text has a route list');
  return { text, document: jsYaml.load(text) as Record<string, unknown>, list };
}

type Edit = (text: string, next: () => number, indent: string) => string;

const lineStarts = (text: string): number[] => [
  0,
  ...[...text.matchAll(/\n/g)].map((m) => (m.index ?? 0) + 1),
];
const pick = <T>(list: readonly T[], next: () => number): T => list[Math.floor(next() * list.length)] as T;

const EDITS: Readonly<Record<string, Edit>> = {
  'change a value inside an item': (text, next) => {
    const matches = [...text.matchAll(/r(\d+)\.example\.test/g)];
    const match = pick(matches, next);
    const at = match.index ?? 0;
    return (
      text.slice(0, at) +
      `changed${Math.floor(next() * 1000)}.example.test` +
      text.slice(at + match[0].length)
    );
  },
  'insert a whole item': (text, next, indent) => {
    const starts = [...text.matchAll(new RegExp(`^${indent}- `, 'gm'))].map((m) => m.index ?? 0);
    const at = pick(starts, next);
    return (
      text.slice(0, at) +
      item(900 + Math.floor(next() * 99), indent, Math.floor(next() * 60)) +
      text.slice(at)
    );
  },
  'remove a whole item': (text, next, indent) => {
    const starts = [...text.matchAll(new RegExp(`^${indent}- `, 'gm'))].map((m) => m.index ?? 0);
    const index = Math.floor(next() * starts.length);
    const end = starts[index + 1] ?? text.indexOf('# trailing comment');
    return text.slice(0, starts[index]) + text.slice(end);
  },
  'append an item at the end of the list': (text, next, indent) => {
    const at = text.indexOf('# trailing comment');
    return text.slice(0, at) + item(999, indent, Math.floor(next() * 60)) + text.slice(at);
  },
  'change a top-level key': (text) => text.replace('log_level: info', 'log_level: debug'),
  'add a top-level key between items': (text, next, indent) => {
    const starts = [...text.matchAll(new RegExp(`^${indent}- `, 'gm'))].map((m) => m.index ?? 0);
    const at = pick(starts.slice(1), next);
    return text.slice(0, at) + 'address: 127.0.0.1:8080\n' + text.slice(at);
  },
  'outdent a line inside an item': (text, next, indent) => {
    const starts = lineStarts(text).filter((at) => text.startsWith(`${indent}  to:`, at));
    const at = pick(starts, next);
    return text.slice(0, at) + text.slice(at + indent.length + 1);
  },
  'edit a block scalar': (text) => text.replace('line one', 'line one, edited'),
  'add a comment line between items': (text, next, indent) => {
    const starts = [...text.matchAll(new RegExp(`^${indent}- `, 'gm'))].map((m) => m.index ?? 0);
    const at = pick(starts, next);
    return text.slice(0, at) + '# a note\n' + text.slice(at);
  },
  'break the syntax inside an item': (text) =>
    text.replace('    - http://10.0.0.3:8080,3', '    - [unclosed'),
  'delete everything': () => '',
};

for (const indent of ['  ', '']) {
  test(`a spliced parse equals a full parse or declines (items indented ${indent.length})`, () => {
    const next = seededRandom(indent.length + 7);
    const outcomes = new Map<string, { spliced: number; declined: number }>();
    for (let round = 0; round < 40; round++) {
      const original = documentText(5 + Math.floor(next() * 20), indent, round);
      let current = base(original);
      for (let step = 0; step < 6; step++) {
        const name = pick(Object.keys(EDITS), next);
        const text = (EDITS[name] as Edit)(current.text, next, indent);
        const spliced = spliceParse(current, text);
        const outcome = outcomes.get(name) ?? { spliced: 0, declined: 0 };
        outcomes.set(name, outcome);
        let full: unknown;
        try {
          full = jsYaml.load(text);
        } catch {
          full = undefined;
        }
        if (spliced === undefined) {
          outcome.declined++;
          if (full === undefined || full === null || routeListLayout(text) === undefined) break;
          current = base(text);
          continue;
        }
        outcome.spliced++;
        assert.ok(
          isDeepStrictEqual(spliced.document, full),
          `${name} (round ${round}, step ${step}): spliced document differs from the full parse`,
        );
        assert.deepEqual(spliced.list, routeListLayout(text), `${name}: item offsets`);
        current = spliced;
      }
    }
    // The cases that must splice did, and the ones that must not never did.
    for (const name of ['change a value inside an item', 'insert a whole item', 'remove a whole item']) {
      assert.ok((outcomes.get(name)?.spliced ?? 0) > 0, `${name} was spliced at least once`);
    }
    for (const name of [
      'change a top-level key',
      'add a top-level key between items',
      'outdent a line inside an item',
      'break the syntax inside an item',
      'delete everything',
    ]) {
      assert.equal(outcomes.get(name)?.spliced ?? 0, 0, `${name} must fall back to a full parse`);
    }
  });
}

test('unchanged items keep their objects, so later stages can skip them', () => {
  const text = documentText(10, '  ', 1);
  const before = base(text);
  const spliced = spliceParse(before, text.replace('r4.example.test', 'r4-new.example.test'));
  assert.ok(spliced);
  const oldItems = before.document.routes as object[];
  const newItems = spliced.document.routes as object[];
  assert.equal(newItems.filter((entry, index) => entry === oldItems[index]).length, 9);
  assert.notEqual(newItems[4], oldItems[4]);
});

test('no route list, flow style, or document markers: nothing to splice', () => {
  assert.equal(routeListLayout('insecure_server: true\n'), undefined);
  assert.equal(routeListLayout('routes: [{from: "https://a.test", to: "http://b"}]\n'), undefined);
  assert.equal(routeListLayout('---\nroutes:\n  - from: https://a.test\n'), undefined);
  assert.equal(routeListLayout('routes:\n\t- from: https://a.test\n'), undefined);
});

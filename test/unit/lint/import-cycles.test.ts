// No import cycles in src, type-only imports included: ESLint's `import-x/no-cycle` (eslint.config.js)
// guards value imports, and this test walks every import TypeScript itself finds
// (`ts.preProcessFile`), so a cycle through `import type` fails too. Cycles make stage boundaries
// meaningless: a type cycle between two modules is the first step to a value cycle.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('../../..', import.meta.url));

/** Every .ts file under `dir`, as repo-relative paths. */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** The repo-relative .ts files `file` imports (relative specifiers only, `.js` mapped to `.ts`). */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
  return info.importedFiles
    .map((ref) => ref.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => normalize(join(dirname(file), name.replace(/\.js$/, '.ts'))));
}

/** The strongly connected components with more than one file (or a self-import): the cycles. */
function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node) as number);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next))
        low.set(node, Math.min(low.get(node) as number, index.get(next) as number));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

test('findCycles finds a two-file cycle and passes a chain', () => {
  const cycle = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['a.ts']],
  ]);
  assert.deepEqual(findCycles(cycle), [['a.ts', 'b.ts']]);
  const chain = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts']],
    ['c.ts', []],
  ]);
  assert.deepEqual(findCycles(chain), []);
});

test('src has no import cycles, type-only imports included', () => {
  const files = sourceFiles('src');
  assert.ok(files.length > 50, `expected the sources under src, found ${files.length}`);
  const graph = new Map(files.map((file) => [file, importsOf(file)]));
  const cycles = findCycles(graph).map((cycle) => cycle.map((file) => relative('src', file)).join(' <-> '));
  assert.deepEqual(cycles, []);
});

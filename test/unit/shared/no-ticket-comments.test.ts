// Comments in src say why, in their own words: a reader must not need the work-tracking tool to
// understand one, so no comment points at an issue or its items. (The not-supported marks name
// the issue that builds an option in what users see: that is product data, not a comment.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const SRC = new URL('../../../src', import.meta.url).pathname;
const TICKET = /\bissues? +show\b|\(issue[\s*]+\d+|, issue \d+\)|\bissue \d+ item \d+/;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

test('no comment in src refers to an issue', () => {
  const found: string[] = [];
  for (const file of files(SRC)) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, index) => {
        const comment = /^\s*(\/\/|\*|\/\*\*)/.test(line);
        if (comment && TICKET.test(line)) found.push(`${relative(SRC, file)}:${index + 1}: ${line.trim()}`);
      });
  }
  assert.deepEqual(found, []);
});

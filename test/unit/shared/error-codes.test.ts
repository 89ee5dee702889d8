// The error-code table is the one list: the type makes every thrown code one of its keys (a typo
// fails `npm run typecheck`); this test keeps the table free of codes nothing throws any more, and
// the operators' reference in step with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CODES } from '../../../src/shared/error-codes.js';

const SRC = new URL('../../../src', import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('error-codes.ts') ? [readFileSync(path, 'utf8')] : [];
  });
}

test('every error code in the table is thrown somewhere, and each has a meaning', () => {
  const text = sources(SRC).join('\n');
  const unused = Object.keys(ERROR_CODES).filter((code) => !text.includes(`'${code}'`));
  assert.deepEqual(unused, [], 'codes nothing throws: remove them from src/shared/error-codes.ts');
  for (const [code, meaning] of Object.entries(ERROR_CODES)) {
    assert.match(code, /^[A-Z][A-Z0-9_]+$/);
    assert.ok(meaning.endsWith('.') && meaning.length > 20, `${code} needs a sentence saying what it means`);
  }
});

test('docs/reference.md lists every error code', () => {
  const reference = readFileSync(new URL('../../../docs/reference.md', import.meta.url), 'utf8');
  for (const code of Object.keys(ERROR_CODES)) assert.ok(reference.includes(`\`${code}\``), code);
});

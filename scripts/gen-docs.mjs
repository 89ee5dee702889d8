// Writes docs/reference.md from the option table (`npm run docs`); `--check` exits 1 when the
// file is out of date instead. Runs the TypeScript sources through tsx (a development tool).
import { register } from 'tsx/esm/api';

register();
const { referenceMarkdown, REFERENCE_PATH } = await import('../src/config/reference-file.ts');
const { readFileSync, writeFileSync } = await import('node:fs');

const expected = await referenceMarkdown();
const current = (() => {
  try {
    return readFileSync(REFERENCE_PATH, 'utf8');
  } catch {
    return '';
  }
})();
if (process.argv.includes('--check')) {
  if (current !== expected) {
    console.error('docs/reference.md is out of date: run npm run docs');
    process.exit(1);
  }
  console.log('docs/reference.md is up to date');
} else if (current !== expected) {
  writeFileSync(REFERENCE_PATH, expected);
  console.log('wrote docs/reference.md');
} else {
  console.log('docs/reference.md is up to date');
}

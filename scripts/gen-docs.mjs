// Writes docs/reference.md and deploy/kubernetes/crd.yaml from the option table (`npm run docs`);
// `--check` exits 1 when either file is out of date instead. Runs the TypeScript sources through
// tsx (a development tool).
import { register } from 'tsx/esm/api';

register();
const { referenceMarkdown, REFERENCE_PATH } = await import('../src/config/reference-file.ts');
const { crdYaml, CRD_PATH } = await import('../src/kubernetes/crd-file.ts');
const { readFileSync, writeFileSync } = await import('node:fs');
const { relative } = await import('node:path');

const outputs = [
  { path: REFERENCE_PATH, expected: await referenceMarkdown() },
  { path: CRD_PATH, expected: await crdYaml() },
];
let stale = false;
for (const { path, expected } of outputs) {
  const name = relative(process.cwd(), path);
  const current = (() => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return '';
    }
  })();
  if (current === expected) {
    console.log(`${name} is up to date`);
  } else if (process.argv.includes('--check')) {
    console.error(`${name} is out of date: run npm run docs`);
    stale = true;
  } else {
    writeFileSync(path, expected);
    console.log(`wrote ${name}`);
  }
}
if (stale) process.exit(1);

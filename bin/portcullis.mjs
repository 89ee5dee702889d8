#!/usr/bin/env node
// The `portcullis` command: runs the compiled JavaScript in dist/ (built by `npm run build`, which
// `npm run setup` and `npm test` run). TypeScript sources are never loaded at run time.
import { existsSync } from 'node:fs';

const main = new URL('../dist/cmd/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('portcullis: dist/ is missing; run `npm run build` (or `npm run setup`) first\n');
  process.exit(1);
}
await import(main.href);

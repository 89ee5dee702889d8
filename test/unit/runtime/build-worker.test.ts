// The reload loop with its build worker (Reloader `worker`): the worker builds what this thread
// would build (same snapshot version), a worker that throws, exits or runs out of memory makes a
// failed reload with a clear message while the last good build keeps serving, and the next reload
// runs in a fresh worker; an Envoy NACK rolls back to the last taken build and later deltas still
// apply; the compiled worker entry (dist) loads as the product runs it; close stops the worker.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reloader } from '../../../src/runtime/reloader.js';
import { build } from '../../../src/runtime/build-pipeline.js';
import { BuildWorker } from '../../../src/runtime/build-worker.js';
import type { PublishedBuild } from '../../../src/runtime/subscribers.js';
import type { EnvoyVerdict } from '../../../src/xds/publish/envoy-verdict.js';
import { recordingLogger } from '../../../src/shared/logger.js';
import { SIGN_IN_YAML } from '../../support/sign-in-config.js';
import { waitFor } from '../../support/wait.js';

const CA = '/etc/ssl/certs/ca-certificates.crt';
const SECRETS = `shared_secret: ${randomBytes(32).toString('base64')}\ncookie_secret: ${randomBytes(32).toString('base64')}\n`;
const CRASHING = new URL('../../support/crashing-build-worker.ts', import.meta.url);

function configText(routes: number, marker = ''): string {
  const lines = Array.from(
    { length: routes },
    (_, i) => `  - from: https://r${i}.test\n    to: http://127.0.0.1:${9000 + i}\n`,
  );
  return `${marker}\ninsecure_server: true\naddress: :8080\n${SECRETS}${SIGN_IN_YAML}routes:\n${lines.join('')}`;
}

function tempConfig(text: string): { path: string; write: (next: string) => void; done: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'build-worker-'));
  const path = join(dir, 'config.yaml');
  writeFileSync(path, text);
  return {
    path,
    write: (next) => {
      writeFileSync(`${path}.tmp`, next);
      renameSync(`${path}.tmp`, path);
    },
    done: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The snapshot version this thread builds from the file now. */
function inThreadVersion(path: string): string {
  const built = build({ configPath: path, env: {}, translate: { systemCaFile: CA } });
  assert.ok(built.ok);
  return built.snapshot.version;
}

test('the worker builds what this thread builds, and the deltas after it too', async () => {
  const file = tempConfig(configText(12));
  const got: PublishedBuild[] = [];
  const reloader = new Reloader({
    configPath: file.path,
    env: {},
    translate: { systemCaFile: CA },
    logger: recordingLogger(),
    subscribers: [{ name: 'record', publish: (b) => got.push(b) }],
    worker: { chunkLimits: { items: 5, names: 5 } },
  });
  try {
    const first = await reloader.start();
    assert.equal(first.snapshot.version, inThreadVersion(file.path));
    for (const [i, routes] of [13, 7, 8, 20].entries()) {
      // The watcher notices the rename and reloads (in the worker).
      file.write(configText(routes));
      await waitFor(async () => got.length === i + 2, { what: `the build of ${routes} routes` });
      const result = got.at(-1);
      assert.equal(result?.snapshot.version, inThreadVersion(file.path), `${routes} routes`);
      assert.equal(result?.ir.virtualHosts.length, routes);
    }
  } finally {
    reloader.close();
    file.done();
  }
});

for (const crash of ['throw', 'exit', 'oom'] as const) {
  test(`a build worker that ends (${crash}) makes a failed reload; the last good serves; a fresh worker builds the next`, async () => {
    const file = tempConfig(configText(3));
    const logger = recordingLogger();
    const outcomes: boolean[] = [];
    const reloader = new Reloader({
      configPath: file.path,
      env: {},
      translate: { systemCaFile: CA },
      logger,
      onReload: (result) => outcomes.push(result.ok),
      worker: {
        entry: CRASHING,
        resourceLimits: { maxOldGenerationSizeMb: 48, maxYoungGenerationSizeMb: 8 },
      },
    });
    try {
      const first = await reloader.start();
      file.write(configText(4, `#crash-${crash}`));
      await waitFor(async () => outcomes.length === 2, { what: 'the reload the worker crashed in' });
      assert.equal(outcomes[1], false);
      const message = reloader.current().lastProblems[0]?.message ?? '';
      assert.match(message, /^the config could not be processed: the build worker /);
      if (crash === 'throw') assert.match(message, /boom in the build worker/);
      if (crash === 'exit') assert.match(message, /exited \(code 3\)/);
      if (crash === 'oom') assert.match(message, /memory/i);
      assert.equal(reloader.lastGoodBuild(), first, 'the last good build keeps serving');
      assert.ok(
        logger.records.some((r) => r.level === 'error' && JSON.stringify(r).includes('the build worker')),
      );
      file.write(configText(5));
      await waitFor(async () => outcomes.length === 3, { what: 'the next reload' });
      assert.deepEqual(outcomes, [true, false, true], 'a fresh worker builds the next config');
      assert.equal(reloader.lastGoodBuild()?.snapshot.version, inThreadVersion(file.path));
    } finally {
      reloader.close();
      file.done();
    }
  });
}

test('a NACKed build rolls back to the last taken one; the next delta still applies to the build received', async () => {
  const file = tempConfig(configText(6));
  const got: string[] = [];
  let answer: (verdict: EnvoyVerdict) => void = () => undefined;
  const reloader = new Reloader({
    configPath: file.path,
    env: {},
    translate: { systemCaFile: CA },
    logger: recordingLogger(),
    subscribers: [{ name: 'authorize', publish: (b) => got.push(b.snapshot.version) }],
    envoyVerdict: () => new Promise((resolve) => (answer = resolve)),
    worker: true,
  });
  try {
    const first = (await reloader.start()).snapshot.version;
    file.write(configText(7));
    await waitFor(async () => got.length === 2, { what: 'the second build to be published' });
    answer({ kind: 'rejected', nodeId: 'envoy-1', type: 'routes', errorDetail: 'no, thanks' });
    await waitFor(async () => got.length === 3, { what: 'the rollback' });
    assert.deepEqual(got.slice(2), [first], 'back to the taken build');
    assert.equal(reloader.lastGoodBuild()?.snapshot.version, first);
    assert.equal(reloader.current().failures, 1);
    file.write(configText(9));
    await waitFor(async () => got.length === 4, { what: 'the third build to be published' });
    answer({ kind: 'taken', envoys: 1 });
    await waitFor(async () => reloader.current().lastSuccess, { what: 'the third build taken' });
    const result = reloader.lastGoodBuild();
    assert.equal(result?.snapshot.version, inThreadVersion(file.path));
    assert.equal(result?.ir.virtualHosts.length, 9);
  } finally {
    reloader.close();
    file.done();
  }
});

test('the compiled worker entry (dist, as bin/portcullis.mjs runs it) loads and builds; close stops it', async () => {
  const entry = new URL('../../../dist/runtime/build-worker-main.js', import.meta.url);
  assert.ok(existsSync(entry), 'dist is built (scripts/run-tests.mjs builds it first)');
  const file = tempConfig(configText(2));
  const worker = new BuildWorker({
    configPath: file.path,
    env: {},
    generatedSecrets: { sharedSecret: randomBytes(32), cookieSecret: randomBytes(32) },
    entry,
  });
  try {
    const done = await worker.build({ externals: { systemCaFile: CA } });
    assert.equal(done.result.ok, true);
    assert.equal(done.result.ok && done.result.snapshot.version, inThreadVersion(file.path));
    assert.equal(worker.running(), true);
  } finally {
    await worker.close();
    file.done();
  }
  assert.equal(worker.running(), false);
  await assert.rejects(worker.build({ externals: { systemCaFile: CA } }), /closed/);
});

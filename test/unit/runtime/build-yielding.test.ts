// The reload loop's pass for changes it notices: the same result as `build`, with the event loop
// given a turn between stages, so Checks are not held for a whole large build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, buildYielding, type BuildInput } from '../../../src/runtime/build-pipeline.js';
import { SIGN_IN_YAML } from '../../support/sign-in-config.js';

function configInput(t: { after(fn: () => void): void }, routes: number): BuildInput {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-yield-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const configPath = join(dir, 'config.yaml');
  const lines = Array.from(
    { length: routes },
    (_, i) =>
      `  - from: https://r${i}.example.com\n    to: http://127.0.0.1:${9000 + (i % 100)}\n    allow_any_authenticated_user: true\n`,
  );
  writeFileSync(configPath, `insecure_server: true\n${SIGN_IN_YAML}routes:\n${lines.join('')}`);
  // The process's generated secrets, fixed: the listener carries the decision key's JWKS, which
  // derives from the shared secret, so two builds agree only under the same one (as in a process).
  const generatedSecrets = { sharedSecret: Buffer.alloc(32, 1), cookieSecret: Buffer.alloc(32, 2) };
  return { configPath, env: {}, translate: { systemCaFile: '/dev/null', generatedSecrets } };
}

test('buildYielding gives the same snapshot as build, and other work runs between its stages', async (t) => {
  const input = configInput(t, 200);
  const expected = build(input);
  assert.ok(expected.ok, JSON.stringify(!expected.ok && expected.problems));
  let turns = 0;
  let counting = true;
  const tick = (): void => {
    if (!counting) return;
    turns += 1;
    setImmediate(tick);
  };
  setImmediate(tick);
  const result = await buildYielding(input);
  counting = false;
  assert.ok(result.ok);
  assert.equal(result.snapshot.version, expected.snapshot.version);
  assert.ok(turns >= 3, `the event loop ran ${turns} times during the build (want one per stage boundary)`);
});

test('buildYielding stops at the first failing stage, like build', async (t) => {
  const input = configInput(t, 1);
  writeFileSync(input.configPath, 'routes: [{ from: 12 }]\n');
  const result = await buildYielding(input);
  const expected = build(input);
  assert.equal(result.ok, false);
  assert.equal(expected.ok, false);
  assert.deepEqual(!result.ok && result.problems, !expected.ok && expected.problems);
});

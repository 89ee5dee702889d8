// `portcullis validate` runs the build's config-reading stages (parse, translate, compile, the
// consistency check) without encoding a snapshot: its verdict, stage, problems and warnings are the
// build's for the same file. `portcullis compile` prints the snapshot's own bytes, which render as
// the compiled messages do.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { parse } from 'yaml';
import { checkConfig, runCompile, runValidate } from '../../../src/cmd/compile-command.js';
import { build } from '../../../src/runtime/build-pipeline.js';
import { systemCaFile } from '../../../src/pki/system-ca.js';
import { compile } from '../../../src/xds/compile/compile.js';
import { renderResources } from '../../../src/proto/render.js';
import { SIGN_IN } from '../../support/sign-in-config.js';

const secrets = {
  shared_secret: randomBytes(32).toString('base64'),
  cookie_secret: randomBytes(32).toString('base64'),
};

/** Writes a config with `settings` over a valid base; `remove` deletes it. */
function configFile(settings: Record<string, unknown>): { path: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-validate-command-'));
  const path = join(dir, 'config.yaml');
  writeFileSync(
    path,
    JSON.stringify({
      ...SIGN_IN,
      ...secrets,
      insecure_server: true,
      address: '127.0.0.1:8080',
      routes: [
        {
          from: 'https://app.test',
          to: ['http://10.0.0.1:8080,3', 'http://10.0.0.2:8080,1'],
          allowed_domains: ['example.com'],
          outlier_detection: { consecutive_5xx: 5, interval: '10s' },
        },
      ],
      ...settings,
    }),
  );
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

async function withConfig<T>(
  settings: Record<string, unknown>,
  use: (path: string) => T,
): Promise<Awaited<T>> {
  const { path, remove } = configFile(settings);
  try {
    return await use(path);
  } finally {
    remove();
  }
}

const cases: Readonly<Record<string, Record<string, unknown>>> = {
  valid: {},
  'valid, with a warning': { policy: [{ from: 'https://old.test', to: 'http://10.0.0.3:80' }] },
  'a parse problem': { cookie_expire: 'soon' },
  'a route problem': { routes: [{ from: 'https://app.test', to: 'http://10.0.0.1:8080', nope: 1 }] },
  'a translate problem': {
    routes: [
      { from: 'https://app.test', to: 'http://10.0.0.1:8080', allow_public_unauthenticated_access: true },
      { from: 'https://app.test', to: 'http://10.0.0.2:8080', allow_public_unauthenticated_access: true },
    ],
  },
};

for (const [name, settings] of Object.entries(cases)) {
  test(`validate and the build agree: ${name}`, async () => {
    await withConfig(settings, (path) => {
      const checked = checkConfig(path, {});
      const built = build({ configPath: path, env: {}, translate: { systemCaFile: systemCaFile() } });
      assert.equal(checked.ok, built.ok);
      assert.deepEqual(checked.warnings, built.warnings);
      if (!checked.ok && !built.ok) {
        assert.equal(checked.stage, built.stage);
        assert.deepEqual(checked.problems, built.problems);
      }
      if (checked.ok && built.ok) assert.equal(checked.routeCount, built.ir.process.routeCount);
    });
  });
}

test('the cases reach each outcome (a case that stopped failing would prove nothing)', async () => {
  const outcomes: string[] = [];
  for (const settings of Object.values(cases)) {
    outcomes.push(
      await withConfig(settings, (path) => {
        const checked = checkConfig(path, {});
        return checked.ok ? `ok/${checked.warnings.length > 0}` : checked.stage;
      }),
    );
  }
  assert.deepEqual(outcomes, ['ok/false', 'ok/true', 'parse', 'parse', 'translate']);
});

test('runValidate: exit 0 and the route count; exit 1 listing the problem at its key', async () => {
  const out = new PassThrough();
  const err = new PassThrough();
  const valid = await withConfig({}, (path) => runValidate(path, out, err, {}));
  assert.equal(valid, 0);
  assert.match(String(out.read()), /: valid \(1 routes\)\n$/);
  const invalid = await withConfig(cases['a route problem'] ?? {}, (path) => runValidate(path, out, err, {}));
  assert.equal(invalid, 1);
  assert.match(String(err.read()), /invalid configuration:\n {2}- routes\[0\]\.nope/);
});

test('compile prints the snapshot bytes, which render as the compiled messages', async () => {
  await withConfig({ decision_token_lifetime: '0s' }, async (path) => {
    const out = new PassThrough();
    assert.equal(await runCompile(path, out, new PassThrough(), {}), 0);
    const printed = parse(String(out.read())) as Record<string, unknown>;
    const built = build({ configPath: path, env: {}, translate: { systemCaFile: systemCaFile() } });
    assert.ok(built.ok, built.ok ? '' : JSON.stringify(built.problems));
    const rendered = renderResources(compile(built.ir), { redactSecrets: true });
    for (const kind of ['clusters', 'endpoints', 'listeners', 'scopes', 'routes'] as const) {
      assert.deepEqual(printed[kind], rendered[kind], kind);
    }
    assert.equal((printed.clusters as unknown[]).length, 3);
  });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { loadConfigFile } from '../../../src/config/load-file.js';
import { translate } from '../../../src/translate/translate.js';
import { compile } from '../../../src/xds/compile/compile.js';
import { assertKnownFields } from '../../../src/xds/codec/codec.js';
import { renderResources, toYaml } from '../../../src/xds/codec/render.js';
import { RESOURCE_TYPES } from '../../../src/xds/codec/type-urls.js';
import { checkConsistency } from '../../../src/xds/snapshot/consistency.js';
import type { IR } from '../../../src/ir/types.js';
import { caseNames, deleteOrphans, expectGolden, GOLDEN_DIR, UPDATE_GOLDEN } from '../../support/golden.js';

const CONFIG_DIR = join(GOLDEN_DIR, 'config-to-ir');
const XDS_DIR = join(GOLDEN_DIR, 'ir-to-xds');
const KINDS = ['listeners', 'scopes', 'routes', 'clusters', 'endpoints'] as const;
const TRANSLATE_OPTIONS = {
  systemCaFile: '/etc/ssl/certs/ca-certificates.crt',
  // Goldens show authorization as all-in-one compiles it; the JWKS is a stand-in (no key material).
  internal: {
    authorize: { host: '127.0.0.1', port: 5443 },
    authorizeTimeoutMs: 10_000,
    jwksJson: '{"keys":[]}',
  },
};

/** IR as YAML: a plain data dump, so the seam shows every value translate decided. */
function irToYaml(ir: IR): string {
  return toYaml(JSON.parse(JSON.stringify(ir)));
}

function translateCase(name: string): IR {
  const loaded = loadConfigFile(join(CONFIG_DIR, `${name}.in.yaml`), {});
  assert.deepEqual(loaded.problems, [], `config case ${name} must be valid`);
  assert.ok(loaded.config);
  const translated = translate(loaded.config, TRANSLATE_OPTIONS);
  assert.deepEqual(translated.problems, []);
  assert.ok(translated.ir);
  return translated.ir;
}

for (const name of caseNames(CONFIG_DIR)) {
  test(`config -> IR golden: ${name}`, () => {
    expectGolden(join(CONFIG_DIR, `${name}.out.yaml`), irToYaml(translateCase(name)));
  });
}

/** Every config-to-IR output is also an IR-to-xDS input, plus any extra `ir-to-xds/*.in.yaml`. */
function irCases(): { name: string; ir: IR }[] {
  const fromConfig = caseNames(CONFIG_DIR).map((name) => ({
    name,
    // The seams stay independent: IR -> xDS reads the checked-in IR, except while regenerating.
    ir: UPDATE_GOLDEN
      ? (JSON.parse(JSON.stringify(translateCase(name))) as IR)
      : (parse(readFileSync(join(CONFIG_DIR, `${name}.out.yaml`), 'utf8')) as IR),
  }));
  const extra = caseNames(XDS_DIR).map((name) => ({
    name,
    ir: parse(readFileSync(join(XDS_DIR, `${name}.in.yaml`), 'utf8')) as IR,
  }));
  return [...fromConfig, ...extra];
}

for (const { name, ir } of irCases()) {
  test(`IR -> xDS golden: ${name}`, () => {
    const compiled = compile(ir);
    for (const type of RESOURCE_TYPES) {
      for (const resource of compiled[type]) assertKnownFields(type, resource.message);
    }
    assert.deepEqual(checkConsistency(compiled), []);
    const rendered = renderResources(compiled);
    for (const kind of KINDS) expectGolden(join(XDS_DIR, `${name}.${kind}.yaml`), toYaml(rendered[kind]));
  });
}

test('golden folders hold no orphaned outputs', () => {
  const configKeep = new Set(
    caseNames(CONFIG_DIR).flatMap((name) => [`${name}.in.yaml`, `${name}.out.yaml`]),
  );
  const configOrphans = deleteOrphans(CONFIG_DIR, /\.out\.yaml$/, configKeep);
  const xdsKeep = new Set(irCases().flatMap(({ name }) => KINDS.map((kind) => `${name}.${kind}.yaml`)));
  const xdsOrphans = deleteOrphans(XDS_DIR, /\.(listeners|scopes|routes|clusters|endpoints)\.yaml$/, xdsKeep);
  if (!UPDATE_GOLDEN)
    assert.deepEqual(
      [...configOrphans, ...xdsOrphans],
      [],
      'orphaned golden files; run UPDATE_GOLDEN=1 npm test',
    );
});

test('compile is deterministic: the same IR gives byte-identical output twice', () => {
  for (const { ir } of irCases()) {
    assert.equal(toYaml(renderResources(compile(ir))), toYaml(renderResources(compile(ir))));
  }
});

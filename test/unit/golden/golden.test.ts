import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { parse } from 'yaml';
import { loadConfigFile } from '../../../src/config/load-file.js';
import { translate } from '../../../src/translate/translate.js';
import { internalEndpoints } from '../../../src/translate/internal-endpoints.js';
import { compile } from '../../../src/xds/compile/compile.js';
import { assertKnownFields } from '../../../src/proto/codec.js';
import { renderResources, toYaml } from '../../../src/proto/render.js';
import { RESOURCE_TYPES } from '../../../src/proto/type-urls.js';
import { checkConsistency } from '../../../src/xds/snapshot/consistency.js';
import type { IR } from '../../../src/ir/types.js';
import { caseNames, deleteOrphans, expectGolden, GOLDEN_DIR, UPDATE_GOLDEN } from '../../support/golden.js';
import { generateTestCertificate } from '../../support/test-certs.js';
import { deriveDecisionKey, jwksOf } from '../../../src/keys/signing-key.js';

const CONFIG_DIR = join(GOLDEN_DIR, 'config-to-ir');
const XDS_DIR = join(GOLDEN_DIR, 'ir-to-xds');
const KINDS = ['listeners', 'scopes', 'routes', 'clusters', 'endpoints'] as const;
/**
 * The decision key's public JWKS, derived from a test-only secret: a real key, so Envoy's
 * validation of the goldens parses what jwt_authn verifies with, and the same bytes on every run.
 */
const DECISION_JWKS = JSON.stringify(jwksOf([deriveDecisionKey(new Uint8Array(32).fill(7))]));
const TRANSLATE_OPTIONS = {
  systemCaFile: '/etc/ssl/certs/ca-certificates.crt',
  // Goldens show authorization as all-in-one compiles it; the JWKS is a stand-in (no key material).
  internal: {
    authorize: { host: '127.0.0.1', port: 5443 },
    authorizeTimeoutMs: 10_000,
    jwksJson: '{"keys":[]}',
    decisionJwksJson: DECISION_JWKS,
    // A stand-in too: the real one is derived from shared_secret (contract/grpc-credential.ts).
    http: { host: '127.0.0.1', port: 5080 },
  },
};

/**
 * Key material for the cases, made at test time (no key is committed): config inputs name it as
 * `${GOLDEN_...}` tokens, and outputs show each PEM as a fixed stand-in (`GOLDEN-LISTENER-CERT`),
 * so the goldens stay byte-stable while validation still checks real certificates and keys.
 */
const listener = generateTestCertificate('golden-listener.test');
const client = generateTestCertificate('golden-client.test');
const scratch = mkdtempSync(join(tmpdir(), 'portcullis-golden-'));
const base64 = (pem: string): string => Buffer.from(pem).toString('base64');
const TOKENS: Readonly<Record<string, string>> = {
  GOLDEN_LISTENER_CERT_FILE: listener.certFile,
  GOLDEN_LISTENER_KEY_FILE: listener.keyFile,
  GOLDEN_CA_BASE64: base64(listener.certPem),
  GOLDEN_CLIENT_CERT_BASE64: base64(client.certPem),
  GOLDEN_CLIENT_KEY_BASE64: base64(client.keyPem),
};
const STAND_INS: readonly (readonly [string, string])[] = [
  [listener.certPem, 'GOLDEN-LISTENER-CERT\n'],
  [listener.keyPem, 'GOLDEN-LISTENER-KEY\n'],
  [client.certPem, 'GOLDEN-CLIENT-CERT\n'],
  [client.keyPem, 'GOLDEN-CLIENT-KEY\n'],
];

/** The IR with every test-time PEM replaced by its stand-in (deep, over every string). */
function withStandIns(value: unknown): unknown {
  if (typeof value === 'string')
    return STAND_INS.reduce((text, [pem, standIn]) => text.split(pem.trim()).join(standIn.trim()), value);
  if (Array.isArray(value)) return value.map(withStandIns);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withStandIns(item)]));
  return value;
}

/** IR as YAML: a plain data dump, so the seam shows every value translate decided. */
function irToYaml(ir: IR): string {
  return toYaml(withStandIns(JSON.parse(JSON.stringify(ir))));
}

/** The case's config with its `${GOLDEN_...}` tokens filled in, as a file in a scratch folder. */
function caseInput(name: string): string {
  const text = readFileSync(join(CONFIG_DIR, `${name}.in.yaml`), 'utf8').replace(
    /\$\{(GOLDEN_[A-Z0-9_]+)\}/g,
    (token, key: string) => TOKENS[key] ?? token,
  );
  const path = join(scratch, `${name}.in.yaml`);
  writeFileSync(path, text);
  return path;
}

function translateCase(name: string): IR {
  const loaded = loadConfigFile(caseInput(name), {});
  assert.deepEqual(loaded.problems, [], `config case ${name} must be valid`);
  assert.ok(loaded.config);
  // A proxy run apart dials the service URLs: where Envoy reaches authorize and authenticate then
  // comes from the config, as the runtime computes it (with the stand-in JWKS and own address).
  const split = !loaded.config.all_in_one;
  const internal = split
    ? internalEndpoints(loaded.config, {
        jwksJson: TRANSLATE_OPTIONS.internal.jwksJson,
        decisionJwksJson: TRANSLATE_OPTIONS.internal.decisionJwksJson,
        ownHttp: TRANSLATE_OPTIONS.internal.http,
      })
    : TRANSLATE_OPTIONS.internal;
  const translated = translate(loaded.config, { ...TRANSLATE_OPTIONS, internal });
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
      ? (withStandIns(JSON.parse(JSON.stringify(translateCase(name)))) as IR)
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

// The settings resource's CRD: generated from the option table, committed as
// deploy/kubernetes/crd.yaml (run `npm run docs` after changing the table), with every global
// option either a field or left out with a reason, and secrets only ever as Secret references.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { GLOBAL_OPTIONS } from '../../../src/config/option-table.js';
import { orchestrationField } from '../../../src/config/orchestration-fields.js';
import { compileRe2 } from '../../../src/shared/re2.js';
import { crdYaml, CRD_PATH } from '../../../src/kubernetes/crd-file.js';
import { settingsCrd, specSchema, type Schema } from '../../../src/kubernetes/crd-schema.js';
import { specFields } from '../../../src/kubernetes/spec-fields.js';

type Node = Record<string, unknown> & { properties?: Record<string, Node> };

/** The schema node at a dotted field path under spec. */
function nodeAt(path: string): Node | undefined {
  let node: Node | undefined = specSchema() as Node;
  for (const part of path.split('.')) node = node?.properties?.[part];
  return node;
}

/** Every schema node, with its path, depth first. */
function walk(node: Node, path: string, visit: (node: Node, path: string) => void): void {
  visit(node, path);
  for (const [name, child] of Object.entries(node.properties ?? {})) walk(child, `${path}.${name}`, visit);
  const items = node.items as Node | undefined;
  if (items !== undefined) walk(items, `${path}[]`, visit);
  const entries = node.additionalProperties as Node | undefined;
  if (typeof entries === 'object' && entries.properties !== undefined) walk(entries, `${path}.<name>`, visit);
}

test('deploy/kubernetes/crd.yaml is generated from the option table (run npm run docs)', async () => {
  const committed = readFileSync(CRD_PATH, 'utf8');
  assert.equal(committed, await crdYaml(), 'deploy/kubernetes/crd.yaml is out of date: run npm run docs');
  assert.deepEqual(parse(committed), settingsCrd());
});

test('every global option is a field or is left out with a reason; no two share a field', () => {
  const seen = new Map<string, string>();
  for (const option of GLOBAL_OPTIONS) {
    const field = orchestrationField(option);
    if (field.form === 'left_out') {
      assert.ok(field.reason.length > 20, `${option.key} is left out without a reason`);
      if (field.instead !== undefined)
        assert.ok(nodeAt(field.instead), `${option.key}: no field ${field.instead}`);
      continue;
    }
    assert.match(field.path, /^[a-z][A-Za-z0-9]*(\.[a-z][A-Za-z0-9]*)*$/, option.key);
    assert.ok(nodeAt(field.path), `${option.key}: ${field.path} is not in the CRD`);
    const place = field.form === 'secret' ? `${field.path}#${field.key}` : field.path;
    assert.equal(seen.get(place), undefined, `${option.key} and ${seen.get(place)} share ${place}`);
    seen.set(place, option.key);
  }
});

test('the fields the spec and the issue name exist, with the Secret keys they promise', () => {
  const byKey = (key: string) => {
    const option = GLOBAL_OPTIONS.find((candidate) => candidate.key === key);
    assert.ok(option, key);
    return orchestrationField(option);
  };
  const value = (path: string) => ({ form: 'value', path });
  const secret = (path: string, key: string, shared = true) => ({ form: 'secret', path, key, shared });
  const expected: Record<string, unknown> = {
    idp_provider: value('identityProvider.provider'),
    idp_provider_url: value('identityProvider.url'),
    idp_scopes: value('identityProvider.scopes'),
    idp_request_params: value('identityProvider.requestParams'),
    idp_client_id: secret('identityProvider.secret', 'client_id'),
    idp_client_secret: secret('identityProvider.secret', 'client_secret'),
    authenticate_service_url: value('authenticate.url'),
    cookie_name: value('cookie.name'),
    cookie_same_site: value('cookie.sameSite'),
    shared_secret: secret('secrets', 'shared_secret'),
    cookie_secret: secret('secrets', 'cookie_secret'),
    signing_key: secret('secrets', 'signing_key'),
    databroker_storage_type: value('storage.type'),
    databroker_storage_connection_string: secret('storage.connection', 'connection', false),
    certificates: value('certificates'),
    jwt_claims_headers: value('jwtClaimHeaders'),
    pass_identity_headers: value('passIdentityHeaders'),
  };
  for (const [key, field] of Object.entries(expected)) assert.deepEqual(byKey(key), field, key);
  assert.ok(nodeAt('identityProvider.requestParamsSecret'));
  for (const key of [
    'idp_client_secret_file',
    'shared_secret_file',
    'certificate_file',
    'routes',
    'policy',
  ]) {
    assert.equal(byKey(key).form, 'left_out', key);
  }
});

test('secret options are only ever Secret references in the schema, never a string', () => {
  const providers = specFields().find((field) => field.form === 'provider_map');
  assert.ok(providers?.form === 'provider_map');
  const entry = (nodeAt(providers.path)?.additionalProperties as Node).properties ?? {};
  const secretPaths = [
    ...specFields()
      .filter((field) => field.form !== 'value' && field.form !== 'provider_map')
      .map((field) => ({ path: field.path, node: nodeAt(field.path) })),
    ...providers.entry
      .filter((field) => field.form !== 'value')
      .map((field) => ({ path: `${providers.path}.<name>.${field.path}`, node: entry[field.path] })),
  ];
  assert.ok(secretPaths.length >= 7);
  for (const { path, node } of secretPaths) {
    assert.equal(node?.type, 'object', path);
    assert.deepEqual(node?.required, ['name'], path);
    assert.equal(node?.additionalProperties, undefined, `${path} must not take arbitrary keys`);
  }
  for (const option of GLOBAL_OPTIONS.filter((candidate) => candidate.secret)) {
    const field = orchestrationField(option);
    assert.notEqual(field.form, 'value', `${option.key} is secret but would be written inline`);
  }
});

test('identityProviders: a map of name to the fields of identityProvider, Secrets as references', () => {
  const byKey = GLOBAL_OPTIONS.find((option) => option.key === 'identity_providers');
  assert.ok(byKey);
  assert.deepEqual(orchestrationField(byKey), { form: 'provider_map', path: 'identityProviders' });
  const map = nodeAt('identityProviders');
  assert.equal(map?.type, 'object');
  assert.equal(map?.properties, undefined, 'any provider name is a key');
  const entry = map?.additionalProperties as Node;
  assert.equal(entry.type, 'object');
  const global = nodeAt('identityProvider')?.properties ?? {};
  assert.deepEqual(Object.keys(entry.properties ?? {}).sort(), Object.keys(global).sort());
  assert.deepEqual(Object.keys(entry.properties ?? {}).sort(), [
    'provider',
    'requestParams',
    'requestParamsSecret',
    'scopes',
    'secret',
    'trustUnverifiedEmail',
    'url',
  ]);
  for (const [name, node] of Object.entries(entry.properties ?? {})) {
    const { description, ...shape } = node;
    const { description: _globalDescription, ...globalShape } = global[name] as Node;
    assert.deepEqual(shape, globalShape, `${name} has the schema of identityProvider.${name}`);
    assert.ok(String(description).startsWith(`As \`identityProvider.${name}\`, for this provider. `), name);
  }
  assert.match(String(map?.description), /portcullis\.dev\/identity_provider/);
  assert.match(String(map?.description), /`secret` \(keys `client_id` and `client_secret`\) is required/);
});

test('every pattern is RE2 (the API server compiles it) and every default satisfies its schema', () => {
  walk(specSchema() as Node, 'spec', (node, path) => {
    if (typeof node.pattern === 'string') assert.ok(compileRe2(node.pattern).ok, `${path}: ${node.pattern}`);
    assert.ok(
      typeof node.description === 'string' || path.endsWith('[]') || /\.(name|namespace|key)$/.test(path),
      `${path} has no description`,
    );
  });
  for (const field of specFields()) {
    if (field.form !== 'value' || field.option.default === undefined) continue;
    const node = nodeAt(field.path) as Schema;
    const fallback = field.option.default;
    if (typeof node.pattern === 'string') {
      assert.ok(
        compileRe2(node.pattern).ok && new RegExp(node.pattern).test(fallback),
        `${field.path}: ${fallback}`,
      );
    }
    if (Array.isArray(node.enum)) assert.ok(node.enum.includes(fallback), `${field.path}: ${fallback}`);
  }
});

test('the CRD: cluster-scoped Portcullis v1alpha1 with status, printer columns and the status schema', () => {
  const crd = settingsCrd() as {
    metadata: { name: string };
    spec: { group: string; scope: string; names: Record<string, string>; versions: Node[] };
  };
  assert.equal(crd.metadata.name, 'portcullises.portcullis.dev');
  assert.equal(crd.spec.scope, 'Cluster');
  assert.equal(crd.spec.names.kind, 'Portcullis');
  assert.equal(crd.spec.names.plural, 'portcullises');
  const [version] = crd.spec.versions;
  assert.ok(version);
  assert.equal(version.name, 'v1alpha1');
  assert.equal(version.served, true);
  assert.equal(version.storage, true);
  assert.deepEqual(version.subresources, { status: {} });
  const columns = version.additionalPrinterColumns as { name: string; jsonPath: string }[];
  assert.deepEqual(
    columns.find((column) => column.name === 'Ready')?.jsonPath,
    '.status.conditions[?(@.type=="Ready")].status',
  );
  const root = (version.schema as { openAPIV3Schema: Node }).openAPIV3Schema;
  const status = root.properties?.status;
  const condition = (status?.properties?.conditions?.items as Node).properties;
  assert.deepEqual(condition?.type?.enum, ['Ready', 'Valid']);
  for (const name of ['reason', 'message', 'observedGeneration', 'lastTransitionTime', 'status']) {
    assert.ok(condition?.[name], name);
  }
  assert.deepEqual((status?.properties?.errors?.items as Node).required, ['field', 'message']);
});

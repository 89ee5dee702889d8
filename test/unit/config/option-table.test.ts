// The option table itself: well-formed rows, defaults that pass their own validation, and the
// generated docs/reference.md matching the table (run `npm run docs` after changing the table).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { envName, findOption, GLOBAL_OPTIONS, KNOWN_GLOBAL_KEYS } from '../../../src/config/option-table.js';
import {
  PEER_ONLY_OPTIONS,
  PEER_ONLY_REFUSED,
  PEER_ONLY_REPLACED,
  REMOVED_OPTIONS,
} from '../../../src/config/removed-options.js';
import { ROUTE_OPTIONS } from '../../../src/config/route-option-table.js';
import { supportText } from '../../../src/config/reference-doc.js';
import { referenceMarkdown, REFERENCE_PATH } from '../../../src/config/reference-file.js';
import { valid, base } from './helpers.js';

test('every option has a lower-case unique key, an upper-case env var, services and a one-line doc', () => {
  const keys = new Set<string>();
  for (const option of GLOBAL_OPTIONS) {
    assert.match(option.key, /^[a-z][a-z0-9_]*$/, option.key);
    assert.ok(!keys.has(option.key), `duplicate key ${option.key}`);
    keys.add(option.key);
    assert.equal(envName(option.key), option.key.toUpperCase());
    assert.ok(option.services.length > 0, `${option.key} has no services`);
    assert.ok(option.doc.length > 10 && !option.doc.includes('\n'), `${option.key} needs a one-line doc`);
  }
  assert.equal(
    new Set(KNOWN_GLOBAL_KEYS).size,
    KNOWN_GLOBAL_KEYS.length,
    'aliases must not collide with keys',
  );
});

test('the table has every option the issue names', () => {
  const required = [
    'services',
    'authenticate_service_url',
    'authorize_service_url',
    'databroker_service_url',
    'shared_secret',
    'shared_secret_file',
    'cookie_secret',
    'cookie_secret_file',
    'cookie_name',
    'cookie_domain',
    'cookie_expire',
    'cookie_http_only',
    'cookie_same_site',
    'signing_key',
    'signing_key_file',
    'jwt_claims_headers',
    'pass_identity_headers',
    'set_response_headers',
    'programmatic_redirect_domain_whitelist',
    'address',
    'grpc_address',
    'insecure_server',
    'certificate',
    'certificate_key',
    'certificate_file',
    'certificate_key_file',
    'certificates',
    'use_proxy_protocol',
    'log_level',
    'metrics_address',
    'tracing_sampling_rate',
    'databroker_storage_type',
    'databroker_storage_connection_string',
    'databroker_storage_connection_string_file',
    'databroker_outage_grace',
    'authenticate_internal_service_url',
    'grpc_client_timeout',
    'tls_derive',
    'idp_client_id',
    'idp_client_secret',
    'idp_client_secret_file',
    'idp_provider',
    'idp_provider_url',
    'idp_scopes',
    'idp_request_params',
    'routes',
    'policy',
  ];
  for (const key of required) assert.ok(findOption(key), `missing option ${key}`);
  assert.equal(findOption('ipd_request_params')?.key, 'idp_request_params');
  assert.equal(findOption('jwt_claims_header')?.key, 'jwt_claims_headers');
});

test('the spec defaults: scopes, log level, redirect whitelist, storage, services, cookies', () => {
  const config = valid(base());
  assert.equal(config.idp_scopes, undefined, "unset: the provider's defaults");
  assert.equal(config.log_level, 'info');
  assert.deepEqual(config.programmatic_redirect_domain_whitelist, ['localhost']);
  assert.equal(config.databroker_storage_type, 'memory');
  assert.equal(config.databroker_outage_grace_ms, 60_000);
  assert.deepEqual(config.services, ['authenticate', 'authorize', 'proxy', 'databroker']);
  assert.equal(config.all_in_one, true);
  assert.equal(config.cookie_name, '_portcullis');
  assert.equal(config.cookie_expire_ms, 14 * 3600 * 1000);
  assert.equal(config.cookie_same_site, 'lax');
  assert.equal(config.cookie_http_only, true);
  assert.equal(config.pass_identity_headers, false);
  assert.equal(config.jwt_issuer_format, 'host_only');
  assert.equal(config.authenticate_callback_path, '/oauth2/callback');
});

test('every `_file` option points at an option of the table', () => {
  for (const option of GLOBAL_OPTIONS) {
    if (option.kind.type === 'file') {
      assert.ok(findOption(option.kind.of), `${option.key} reads into unknown ${option.kind.of}`);
      assert.equal(option.key, `${option.kind.of}_file`);
    }
  }
});

test('removed options are not also current options, and each says what to do', () => {
  for (const removed of REMOVED_OPTIONS) {
    if (removed.scope === 'global') assert.equal(findOption(removed.key), undefined, removed.key);
    if (removed.scope === 'route')
      assert.ok(!ROUTE_OPTIONS.some((option) => option.key === removed.key), removed.key);
    assert.ok(removed.fix.length > 10, removed.key);
    if (removed.migrate.kind === 'rename' && removed.scope === 'global')
      assert.ok(findOption(removed.migrate.to));
  }
});

test('options of the peer that Portcullis lacks are not current options (they would be documented as ignored)', () => {
  for (const key of [
    ...PEER_ONLY_OPTIONS,
    ...Object.keys(PEER_ONLY_REFUSED),
    ...Object.keys(PEER_ONLY_REPLACED),
  ]) {
    assert.equal(findOption(key), undefined, `${key} is implemented now: remove it from removed-options.ts`);
  }
});

test('docs/reference.md is generated from the table (run `npm run docs` when this fails)', async () => {
  const expected = await referenceMarkdown();
  assert.equal(
    readFileSync(REFERENCE_PATH, 'utf8'),
    expected,
    'docs/reference.md is out of date: run npm run docs',
  );
  for (const option of GLOBAL_OPTIONS) assert.ok(expected.includes(`\`${envName(option.key)}\``), option.key);
  for (const removed of REMOVED_OPTIONS) assert.ok(expected.includes(`\`${removed.key}\``), removed.key);
  for (const option of ROUTE_OPTIONS) assert.ok(expected.includes(`\`${option.key}\``), option.key);
  assert.match(expected, /trailing\s+newline/, 'the docs say secret files are trimmed');
  const marked = [...GLOBAL_OPTIONS, ...ROUTE_OPTIONS].filter((option) => option.support !== undefined);
  assert.equal(
    expected.split('**Not supported yet (issue ').length - 1,
    marked.length,
    'each option not supported yet says so in its description',
  );
  for (const { key, support } of marked) assert.ok(support && expected.includes(supportText(support)), key);
});

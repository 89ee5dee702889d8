// Every option from every source: its default, the config file, the environment variable, and
// env winning over the file. One row per option of the table; a test fails if a row is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GLOBAL_OPTIONS, envName } from '../../../src/config/option-table.js';
import type { Config } from '../../../src/config/types.js';
import { b64, CERT_PEM, EC_KEY_PEM, KEY_PEM, parse, RSA_KEY_PEM, SECRET_32, valid } from './helpers.js';

const SECRET_B = Buffer.alloc(32, 7).toString('base64');
const CERT_B = CERT_PEM.replace('TEST-CERT', 'OTHER-CERT');
const KEY_B = KEY_PEM.replace('TEST-KEY', 'OTHER-KEY');

/** Self-hosted authenticate, split-safe secrets, plain HTTP: every option can be set on top. */
const CONTEXT: Record<string, unknown> = {
  insecure_server: true,
  address: ':8080',
  authenticate_service_url: 'https://auth.example.com',
  idp_provider: 'google',
  idp_client_id: 'client',
  idp_client_secret: 'client-secret',
  shared_secret: SECRET_32,
  cookie_secret: SECRET_32,
};

interface Row {
  readonly key: string;
  readonly file: unknown;
  readonly env: string;
  readonly read: (config: Config) => unknown;
  readonly fromFile: unknown;
  readonly fromEnv: unknown;
  /** Extra context for this row; a key set to undefined is removed from CONTEXT. */
  readonly context?: Record<string, unknown>;
  readonly files?: Record<string, string>;
}

const href = (url: URL | undefined): string | undefined => url?.href;
const reveal = (secret: { reveal(): Buffer | string } | undefined): string | undefined => {
  const value = secret?.reveal();
  return Buffer.isBuffer(value) ? value.toString('base64') : value;
};

const ROWS: readonly Row[] = [
  {
    // Split modes: each names the services it reaches elsewhere (loopback needs no TLS).
    key: 'services',
    file: 'authenticate,proxy',
    env: 'proxy',
    read: (c) => c.services,
    fromFile: ['authenticate', 'proxy'],
    fromEnv: ['proxy'],
    context: {
      authorize_service_url: 'http://127.0.0.1:5443',
      databroker_service_url: 'http://127.0.0.1:5453',
      authenticate_internal_service_url: 'http://127.0.0.1:5444',
    },
  },
  {
    key: 'authenticate_service_url',
    file: 'https://a.example.com',
    env: 'https://b.example.com',
    read: (c) => href(c.authenticate_service_url),
    fromFile: 'https://a.example.com/',
    fromEnv: 'https://b.example.com/',
  },
  {
    key: 'authenticate_internal_service_url',
    file: 'http://auth.internal:5444',
    env: 'http://auth2.internal:5444',
    read: (c) => href(c.authenticate_internal_service_url),
    fromFile: 'http://auth.internal:5444/',
    fromEnv: 'http://auth2.internal:5444/',
    context: { grpc_insecure: true },
  },
  {
    key: 'authenticate_callback_path',
    file: '/cb',
    env: '/oauth/cb',
    read: (c) => c.authenticate_callback_path,
    fromFile: '/cb',
    fromEnv: '/oauth/cb',
  },
  {
    key: 'authorize_service_url',
    file: 'http://authz:5443',
    env: 'http://authz2:5443',
    read: (c) => href(c.authorize_service_url),
    fromFile: 'http://authz:5443/',
    fromEnv: 'http://authz2:5443/',
    context: {
      services: 'proxy',
      grpc_insecure: true,
      authenticate_internal_service_url: 'http://authn:5444',
    },
  },
  {
    // Where this process's Envoy reaches the in-process authorize (a sidecar in another container).
    key: 'authorize_internal_service_url',
    file: 'http://portcullis:5443',
    env: 'http://portcullis2:5443',
    read: (c) => href(c.authorize_internal_service_url),
    fromFile: 'http://portcullis:5443/',
    fromEnv: 'http://portcullis2:5443/',
    context: { grpc_insecure: true },
  },
  {
    key: 'databroker_service_url',
    file: 'https://db:5443',
    env: 'https://db2:5443',
    read: (c) => href(c.databroker_service_url),
    fromFile: 'https://db:5443/',
    fromEnv: 'https://db2:5443/',
    context: { services: 'authenticate,authorize,proxy', tls_derive: 'portcullis.internal' },
  },
  {
    key: 'signout_redirect_url',
    file: 'https://bye.example.com',
    env: 'https://ciao.example.com',
    read: (c) => href(c.signout_redirect_url),
    fromFile: 'https://bye.example.com/',
    fromEnv: 'https://ciao.example.com/',
  },
  {
    key: 'shared_secret',
    file: SECRET_32,
    env: SECRET_B,
    read: (c) => reveal(c.shared_secret),
    fromFile: SECRET_32,
    fromEnv: SECRET_B,
  },
  {
    key: 'shared_secret_file',
    file: '/s/a',
    env: '/s/b',
    read: (c) => reveal(c.shared_secret),
    fromFile: SECRET_32,
    fromEnv: SECRET_B,
    context: { shared_secret: undefined },
    files: { '/s/a': `${SECRET_32}\n`, '/s/b': `${SECRET_B}\n` },
  },
  {
    key: 'cookie_secret',
    file: SECRET_32,
    env: SECRET_B,
    read: (c) => reveal(c.cookie_secret),
    fromFile: SECRET_32,
    fromEnv: SECRET_B,
  },
  {
    key: 'cookie_secret_file',
    file: '/c/a',
    env: '/c/b',
    read: (c) => reveal(c.cookie_secret),
    fromFile: SECRET_32,
    fromEnv: SECRET_B,
    context: { cookie_secret: undefined },
    files: { '/c/a': SECRET_32, '/c/b': `  ${SECRET_B}\r\n` },
  },
  {
    key: 'idp_provider',
    file: 'gitlab',
    env: 'GitHub',
    read: (c) => c.idp_provider,
    fromFile: 'gitlab',
    fromEnv: 'github',
  },
  {
    key: 'idp_provider_url',
    file: 'https://idp.example.com',
    env: 'https://idp2.example.com/realms/x',
    read: (c) => href(c.idp_provider_url),
    fromFile: 'https://idp.example.com/',
    fromEnv: 'https://idp2.example.com/realms/x',
  },
  { key: 'idp_client_id', file: 'a', env: 'b', read: (c) => c.idp_client_id, fromFile: 'a', fromEnv: 'b' },
  {
    key: 'idp_client_secret',
    file: 'x',
    env: 'y',
    read: (c) => reveal(c.idp_client_secret),
    fromFile: 'x',
    fromEnv: 'y',
  },
  {
    key: 'idp_client_secret_file',
    file: '/i/a',
    env: '/i/b',
    read: (c) => reveal(c.idp_client_secret),
    fromFile: 'from-a',
    fromEnv: 'from-b',
    context: { idp_client_secret: undefined },
    files: { '/i/a': 'from-a\n', '/i/b': 'from-b' },
  },
  {
    key: 'idp_scopes',
    file: ['openid', 'groups'],
    env: 'openid, email',
    read: (c) => c.idp_scopes,
    fromFile: ['openid', 'groups'],
    fromEnv: ['openid', 'email'],
  },
  {
    key: 'idp_request_params',
    file: { prompt: 'login' },
    env: '{"prompt":"consent"}',
    read: (c) => c.idp_request_params,
    fromFile: { prompt: 'login' },
    fromEnv: { prompt: 'consent' },
  },
  {
    key: 'idp_trust_unverified_email',
    file: true,
    env: 'false',
    read: (c) => c.idp_trust_unverified_email,
    fromFile: true,
    fromEnv: false,
  },
  { key: 'cookie_name', file: '_a', env: '_b', read: (c) => c.cookie_name, fromFile: '_a', fromEnv: '_b' },
  {
    key: 'cookie_domain',
    file: 'example.com',
    env: 'corp.example.com',
    read: (c) => c.cookie_domain,
    fromFile: 'example.com',
    fromEnv: 'corp.example.com',
  },
  {
    key: 'cookie_expire',
    file: '1h',
    env: '30m',
    read: (c) => c.cookie_expire_ms,
    fromFile: 3_600_000,
    fromEnv: 1_800_000,
  },
  {
    key: 'cookie_http_only',
    file: false,
    env: 'true',
    read: (c) => c.cookie_http_only,
    fromFile: false,
    fromEnv: true,
  },
  {
    key: 'cookie_same_site',
    file: 'lax',
    env: 'Strict',
    read: (c) => c.cookie_same_site,
    fromFile: 'lax',
    fromEnv: 'strict',
  },
  {
    key: 'signing_key',
    file: EC_KEY_PEM,
    env: b64(RSA_KEY_PEM),
    read: (c) => c.signing_key?.algorithm,
    fromFile: 'ES256',
    fromEnv: 'RS256',
  },
  {
    key: 'signing_key_file',
    file: '/k/ec',
    env: '/k/rsa',
    read: (c) => c.signing_key?.algorithm,
    fromFile: 'ES256',
    fromEnv: 'RS256',
    files: { '/k/ec': EC_KEY_PEM, '/k/rsa': RSA_KEY_PEM },
  },
  {
    key: 'jwt_claims_headers',
    file: ['email'],
    env: '{"X-Groups":"groups"}',
    read: (c) => c.jwt_claims_headers,
    fromFile: { 'X-Portcullis-Claim-Email': 'email' },
    fromEnv: { 'X-Groups': 'groups' },
  },
  {
    key: 'jwt_groups_filter',
    file: ['admins'],
    env: 'eng,ops',
    read: (c) => c.jwt_groups_filter,
    fromFile: ['admins'],
    fromEnv: ['eng', 'ops'],
  },
  {
    key: 'jwt_issuer_format',
    file: 'uri',
    env: 'host_only',
    read: (c) => c.jwt_issuer_format,
    fromFile: 'uri',
    fromEnv: 'host_only',
  },
  {
    key: 'pass_identity_headers',
    file: true,
    env: 'false',
    read: (c) => c.pass_identity_headers,
    fromFile: true,
    fromEnv: false,
  },
  {
    key: 'programmatic_redirect_domain_whitelist',
    file: ['a.example.com'],
    env: 'b.example.com,c.example.com',
    read: (c) => c.programmatic_redirect_domain_whitelist,
    fromFile: ['a.example.com'],
    fromEnv: ['b.example.com', 'c.example.com'],
  },
  {
    key: 'address',
    file: ':9000',
    env: '127.0.0.1:9001',
    read: (c) => c.address,
    fromFile: ':9000',
    fromEnv: '127.0.0.1:9001',
  },
  {
    key: 'insecure_server',
    file: false,
    env: 'true',
    read: (c) => c.insecure_server,
    fromFile: false,
    fromEnv: true,
    context: { certificate: CERT_PEM, certificate_key: KEY_PEM },
  },
  {
    key: 'grpc_address',
    file: '127.0.0.1:6000',
    env: ':6001',
    read: (c) => c.grpc_address,
    fromFile: '127.0.0.1:6000',
    fromEnv: ':6001',
    context: { grpc_insecure: true },
  },
  {
    key: 'grpc_insecure',
    file: true,
    env: 'false',
    read: (c) => c.grpc_insecure,
    fromFile: true,
    fromEnv: false,
  },
  {
    key: 'use_proxy_protocol',
    file: true,
    env: '0',
    read: (c) => c.use_proxy_protocol,
    fromFile: true,
    fromEnv: false,
  },
  {
    key: 'xff_num_trusted_hops',
    file: 2,
    env: '3',
    read: (c) => c.xff_num_trusted_hops,
    fromFile: 2,
    fromEnv: 3,
  },
  {
    key: 'envoy_admin_address',
    file: '127.0.0.1:9902',
    env: '127.0.0.1:9903',
    read: (c) => c.envoy_admin_address,
    fromFile: '127.0.0.1:9902',
    fromEnv: '127.0.0.1:9903',
  },
  {
    key: 'set_response_headers',
    file: { 'X-A': 'a' },
    env: '{"X-B":"b"}',
    read: (c) => c.set_response_headers,
    fromFile: { 'X-A': 'a' },
    fromEnv: { 'X-B': 'b' },
  },
  {
    key: 'certificate',
    file: CERT_PEM,
    env: b64(CERT_B),
    read: (c) => c.certificates[0]?.certPem,
    fromFile: CERT_PEM,
    fromEnv: CERT_B,
    context: { certificate_key: KEY_PEM },
  },
  {
    key: 'certificate_key',
    file: KEY_PEM,
    env: b64(KEY_B),
    read: (c) => c.certificates[0]?.keyPem,
    fromFile: KEY_PEM,
    fromEnv: KEY_B,
    context: { certificate: CERT_PEM },
  },
  {
    key: 'certificate_file',
    file: '/t/a',
    env: '/t/b',
    read: (c) => c.certificates[0]?.certPem,
    fromFile: CERT_PEM,
    fromEnv: CERT_B,
    context: { certificate_key_file: '/t/k' },
    files: { '/t/a': CERT_PEM, '/t/b': CERT_B, '/t/k': KEY_PEM },
  },
  {
    key: 'certificate_key_file',
    file: '/t/a',
    env: '/t/b',
    read: (c) => c.certificates[0]?.keyPem,
    fromFile: KEY_PEM,
    fromEnv: KEY_B,
    context: { certificate_file: '/t/c' },
    files: { '/t/a': KEY_PEM, '/t/b': KEY_B, '/t/c': CERT_PEM },
  },
  {
    key: 'certificates',
    file: [{ cert: '/t/c', key: '/t/k' }],
    env: JSON.stringify([{ cert: b64(CERT_B), key: KEY_B }]),
    read: (c) => c.certificates[0]?.certPem,
    fromFile: CERT_PEM,
    fromEnv: CERT_B,
    files: { '/t/c': CERT_PEM, '/t/k': KEY_PEM },
  },
  {
    key: 'identity_providers',
    file: { partner: { provider_url: 'https://a.example.com', client_id: 'a', client_secret: 's' } },
    env: JSON.stringify({
      partner: { provider_url: 'https://b.example.com', client_id: 'b', client_secret: 's' },
    }),
    read: (c) => c.identity_providers?.partner?.client_id,
    fromFile: 'a',
    fromEnv: 'b',
  },
  {
    // A redirect to HTTPS needs TLS on address.
    key: 'http_redirect_addr',
    file: ':80',
    env: '127.0.0.1:8081',
    read: (c) => c.http_redirect_addr,
    fromFile: ':80',
    fromEnv: '127.0.0.1:8081',
    context: { insecure_server: undefined, certificate: CERT_PEM, certificate_key: KEY_PEM },
  },
  {
    key: 'certificate_authority',
    file: CERT_PEM,
    env: b64(CERT_B),
    read: (c) => c.certificate_authority_pem,
    fromFile: CERT_PEM,
    fromEnv: CERT_B,
  },
  {
    key: 'certificate_authority_file',
    file: '/ca/a',
    env: '/ca/b',
    read: (c) => c.certificate_authority_pem,
    fromFile: CERT_PEM,
    fromEnv: CERT_B,
    files: { '/ca/a': CERT_PEM, '/ca/b': CERT_B },
  },
  {
    key: 'tls_derive',
    file: 'portcullis.internal',
    env: 'Mesh.Example.COM',
    read: (c) => c.tls_derive,
    fromFile: 'portcullis.internal',
    fromEnv: 'mesh.example.com',
  },
  {
    key: 'default_upstream_timeout',
    file: '1m',
    env: '45s',
    read: (c) => c.default_upstream_timeout_ms,
    fromFile: 60_000,
    fromEnv: 45_000,
  },
  {
    key: 'timeout_read',
    file: '10s',
    env: '1m30s',
    read: (c) => c.timeout_read_ms,
    fromFile: 10_000,
    fromEnv: 90_000,
  },
  {
    key: 'timeout_idle',
    file: '1m',
    env: '10m',
    read: (c) => c.timeout_idle_ms,
    fromFile: 60_000,
    fromEnv: 600_000,
  },
  {
    key: 'authorize_timeout',
    file: '2s',
    env: '250ms',
    read: (c) => c.authorize_timeout_ms,
    fromFile: 2_000,
    fromEnv: 250,
  },
  {
    key: 'decision_token_lifetime',
    file: '90s',
    env: '0s',
    read: (c) => c.decision_token_lifetime_ms,
    fromFile: 90_000,
    fromEnv: 0,
  },
  {
    key: 'grpc_client_timeout',
    file: '5s',
    env: '500ms',
    read: (c) => c.grpc_client_timeout_ms,
    fromFile: 5_000,
    fromEnv: 500,
  },
  {
    key: 'log_level',
    file: 'debug',
    env: 'WARNING',
    read: (c) => c.log_level,
    fromFile: 'debug',
    fromEnv: 'warn',
  },
  {
    key: 'proxy_log_level',
    file: 'debug',
    env: 'off',
    read: (c) => c.proxy_log_level,
    fromFile: 'debug',
    fromEnv: 'off',
  },
  {
    key: 'metrics_address',
    file: ':9090',
    env: '127.0.0.1:9091',
    read: (c) => c.metrics_address,
    fromFile: ':9090',
    fromEnv: '127.0.0.1:9091',
  },
  {
    // Base64 of user:password (the peer's form), decoded into the Config.
    key: 'metrics_basic_auth',
    file: b64('scraper:first'),
    env: b64('prometheus:second:with-colon'),
    read: (c) => reveal(c.metrics_basic_auth),
    fromFile: 'scraper:first',
    fromEnv: 'prometheus:second:with-colon',
  },
  {
    key: 'tracing_sampling_rate',
    file: 0.5,
    env: '1',
    read: (c) => c.tracing_sampling_rate,
    fromFile: 0.5,
    fromEnv: 1,
  },
  {
    key: 'otel_exporter_otlp_endpoint',
    file: 'http://collector:4317',
    env: 'https://otel.example.com:4318',
    read: (c) => href(c.otel_exporter_otlp_endpoint),
    fromFile: 'http://collector:4317/',
    fromEnv: 'https://otel.example.com:4318/',
  },
  {
    key: 'otel_exporter_otlp_protocol',
    file: 'http/protobuf',
    env: 'grpc',
    read: (c) => c.otel_exporter_otlp_protocol,
    fromFile: 'http/protobuf',
    fromEnv: 'grpc',
  },
  {
    key: 'databroker_storage_type',
    file: 'redis',
    env: 'REDIS',
    read: (c) => c.databroker_storage_type,
    fromFile: 'redis',
    fromEnv: 'redis',
    context: { databroker_storage_connection_string: 'redis://localhost:6379' },
  },
  {
    key: 'databroker_storage_connection_string',
    file: 'redis://a:6379',
    env: 'rediss://u:p@b:6380/1',
    read: (c) => reveal(c.databroker_storage_connection_string),
    fromFile: 'redis://a:6379',
    fromEnv: 'rediss://u:p@b:6380/1',
  },
  {
    key: 'databroker_storage_connection_string_file',
    file: '/r/a',
    env: '/r/b',
    read: (c) => reveal(c.databroker_storage_connection_string),
    fromFile: 'redis://a:6379',
    fromEnv: 'redis://b:6379',
    files: { '/r/a': 'redis://a:6379\n', '/r/b': 'redis://b:6379' },
  },
  {
    key: 'databroker_outage_grace',
    file: '30s',
    env: '0s',
    read: (c) => c.databroker_outage_grace_ms,
    fromFile: 30_000,
    fromEnv: 0,
  },
];

function documentFor(row: Row, withFileValue: boolean): Record<string, unknown> {
  const document: Record<string, unknown> = { ...CONTEXT, ...row.context };
  for (const [key, value] of Object.entries(document)) if (value === undefined) delete document[key];
  if (withFileValue) document[row.key] = row.file;
  return document;
}

test('every option of the table has a source row (routes and policy are tested in routes.test.ts)', () => {
  const covered = new Set(ROWS.map((row) => row.key));
  const missing = GLOBAL_OPTIONS.filter(
    (option) => option.kind.type !== 'routes' && !covered.has(option.key),
  );
  assert.deepEqual(
    missing.map((option) => option.key),
    [],
  );
});

for (const row of ROWS) {
  test(`${row.key}: file, env, env over file, empty env is unset`, () => {
    const env = envName(row.key);
    const files = row.files ?? {};
    assert.deepEqual(row.read(valid(documentFor(row, true), {}, files)), row.fromFile, 'from the file');
    assert.deepEqual(
      row.read(valid(documentFor(row, false), { [env]: row.env }, files)),
      row.fromEnv,
      'from env',
    );
    assert.deepEqual(
      row.read(valid(documentFor(row, true), { [env]: row.env }, files)),
      row.fromEnv,
      'env wins',
    );
    assert.deepEqual(
      row.read(valid(documentFor(row, true), { [env]: '' }, files)),
      row.fromFile,
      'empty env is unset',
    );
  });
}

test('defaults apply when neither file nor env sets an option', () => {
  for (const option of GLOBAL_OPTIONS.filter((candidate) => candidate.default !== undefined)) {
    const row = ROWS.find((candidate) => candidate.key === option.key);
    if (row === undefined || row.context !== undefined) continue;
    const result = parse(documentFor(row, false), {}, row.files ?? {});
    assert.ok(result.config, `${option.key}: ${JSON.stringify(result.problems)}`);
    assert.notDeepEqual(row.read(result.config), undefined, `${option.key} has a default`);
  }
});

test('both spellings of request params: either works, same value is fine, different values are an error', () => {
  const document = { ...CONTEXT };
  assert.deepEqual(valid({ ...document, ipd_request_params: { a: 'b' } }).idp_request_params, { a: 'b' });
  assert.deepEqual(valid(document, { IPD_REQUEST_PARAMS: '{"a":"c"}' }).idp_request_params, { a: 'c' });
  assert.deepEqual(
    valid({ ...document, idp_request_params: { a: 'b' }, ipd_request_params: { a: 'b' } }).idp_request_params,
    { a: 'b' },
  );
  const both = parse({ ...document, idp_request_params: { a: 'b' }, ipd_request_params: { a: 'x' } });
  assert.equal(both.problems[0]?.path, 'idp_request_params');
  assert.match(both.problems[0]?.message ?? '', /both idp_request_params and ipd_request_params are set/);
  const bothEnv = parse(document, { IDP_REQUEST_PARAMS: '{"a":"b"}', IPD_REQUEST_PARAMS: '{"a":"x"}' });
  assert.match(bothEnv.problems[0]?.message ?? '', /both IDP_REQUEST_PARAMS and IPD_REQUEST_PARAMS/);
});

test('jwt_claims_header (singular) is read as jwt_claims_headers', () => {
  assert.deepEqual(valid({ ...CONTEXT, jwt_claims_header: 'email, groups' }).jwt_claims_headers, {
    'X-Portcullis-Claim-Email': 'email',
    'X-Portcullis-Claim-Groups': 'groups',
  });
});

test('an env problem names the environment variable, a file problem the key', () => {
  const fromEnv = parse({ ...CONTEXT }, { COOKIE_EXPIRE: 'soon' });
  assert.equal(fromEnv.problems[0]?.path, 'COOKIE_EXPIRE');
  const fromFile = parse({ ...CONTEXT, cookie_expire: 'soon' });
  assert.equal(fromFile.problems[0]?.path, 'cookie_expire');
});

// The errors the spec lists (section 7) and the issue adds: each asserts its message and path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { envName } from '../../../src/config/option-table.js';
import { REMOVED_OPTIONS } from '../../../src/config/removed-options.js';
import { formatProblem } from '../../../src/shared/errors.js';
import { SIGN_IN } from '../../support/sign-in-config.js';
import { assertProblem, base, parse, problems, SECRET_32 } from './helpers.js';

test('all-in-one mode with authorize_service_url set is a configuration error, not a gRPC deadline later', () => {
  for (const services of [undefined, 'all', 'authenticate,authorize,proxy,databroker']) {
    const document = base({
      authorize_service_url: 'https://authorize.example.com',
      ...(services ? { services } : {}),
    });
    const list = problems(document);
    assertProblem(list, 'authorize_service_url', 'must not be set in all-in-one mode');
    assertProblem(list, 'authorize_service_url', 'remove authorize_service_url');
  }
  assertProblem(
    problems(base(), { AUTHORIZE_SERVICE_URL: 'https://a.example.com' }),
    'AUTHORIZE_SERVICE_URL',
    'all-in-one',
  );
  // A lone proxy names where authorize and authenticate run; off loopback only with TLS (tls_derive)
  // or grpc_insecure.
  const split = (extra: Record<string, unknown>): string[] =>
    parse(
      base({
        services: 'proxy',
        shared_secret: SECRET_32,
        cookie_secret: SECRET_32,
        ...extra,
      }),
    ).problems.map((problem) => `${problem.path}: ${problem.message.replace(/:.*/s, '')}`);
  assert.deepEqual(split({ authorize_service_url: 'http://authz:5443' }), [
    'authorize_service_url: http',
    'authenticate_internal_service_url: is required',
  ]);
  assert.deepEqual(
    split({
      tls_derive: 'portcullis.internal',
      authorize_service_url: 'https://authz:5443',
      authenticate_internal_service_url: 'https://authn:5444',
    }),
    [],
  );
  assert.deepEqual(
    split({
      authorize_service_url: 'https://authz:5443',
      authenticate_internal_service_url: 'http://127.0.0.1:5444',
    }),
    ['authorize_service_url: https'],
  );
});

test('no certificate and no insecure_server is a descriptive error', () => {
  const list = problems({ routes: [] });
  assertProblem(list, 'certificate', 'no TLS certificate is configured');
  assertProblem(list, 'certificate', 'insecure_server: true');
  assert.deepEqual(parse({ routes: [], insecure_server: true }).problems, []);
  // Services without an HTTP listener need no certificate.
  assert.deepEqual(
    parse({
      services: 'authorize',
      shared_secret: SECRET_32,
      databroker_service_url: 'http://127.0.0.1:5443',
    }).problems,
    [],
  );
});

for (const removed of REMOVED_OPTIONS.filter((option) => option.scope === 'global')) {
  test(`removed option ${removed.key} fails in the file and the environment, naming what to do`, () => {
    const list = problems(base({ [removed.key]: 'x' }));
    assertProblem(list, removed.key, removed.fix);
    assertProblem(list, removed.key, 'portcullis config migrate');
    const env = envName(removed.key);
    assertProblem(problems(base(), { [env]: 'x' }), env, removed.fix);
  });
}

test('the removed options the spec names say what replaces them', () => {
  const replacements: Record<string, RegExp> = {
    headers: /set_response_headers/,
    tracing_debug: /tracing_sampling_rate/,
    cache_service_url: /renamed: use databroker_service_url/,
    policy_file: /routes/,
    idp_service_account: /claim\/groups/,
    idp_qps: /directory sync/,
    signing_key_algorithm: /follows the key/,
    grpc_server_max_connection_age: /no longer configurable/,
    grpc_server_max_connection_age_grace: /no longer configurable/,
    refresh_cooldown: /delete it/,
    administrators: /impersonation was removed/,
    enable_user_impersonation: /impersonation was removed/,
    idp_refresh_directory_timeout: /directory sync/,
    idp_refresh_directory_interval: /directory sync/,
  };
  for (const [key, pattern] of Object.entries(replacements)) {
    const [first] = problems(base({ [key]: 'x' }));
    assert.match(first ?? '', pattern, key);
  }
  assertProblem(problems(base(), { POLICY_FILE: '/etc/policy.yaml' }), 'POLICY_FILE', 'routes');
});

test('allowed_groups and the groups criterion fail, pointing at claim/groups', () => {
  const route = { from: 'https://a.example.com', to: 'http://a:80' };
  assertProblem(
    problems(base({ routes: [{ ...route, allowed_groups: ['admins'] }] })),
    'routes[0].allowed_groups',
    'claim/groups',
  );
  assertProblem(
    problems(base({ policy: [{ ...route, allowed_groups: ['admins'] }] })),
    'policy[0].allowed_groups',
    'claim/groups',
  );
  const withGroups = { ...route, policy: [{ allow: { or: [{ groups: { has: 'admins' } }] } }] };
  assertProblem(
    problems(base({ routes: [withGroups] })),
    'routes[0].policy[0].allow.or[0]',
    'use `claim/groups`',
  );
});

test('the cache service name fails, naming databroker', () => {
  assertProblem(problems(base({ services: 'cache' })), 'services', 'use databroker');
  assertProblem(problems(base(), { SERVICES: 'proxy,cache' }), 'SERVICES', 'use databroker');
});

test('services: anything but the known names is an error listing them', () => {
  assertProblem(
    problems(base({ services: 'proxy,frontend' })),
    'services',
    '"frontend" is not one of all, authenticate, authorize, proxy, databroker',
  );
  assertProblem(problems(base({ services: '' })), 'services', 'is empty');
});

test('unknown keys are errors with a did-you-mean suggestion; known peer options warn as unsupported', () => {
  const result = parse(
    base({ adress: ':8081', IDP_CLIENT_ID: 'x', autocert: true, completely_unrelated_thing: 1 }),
  );
  assert.equal(result.config, undefined);
  const lines = result.problems.map(formatProblem);
  assert.ok(lines.includes('adress: unknown option (did you mean address?)'), lines.join('\n'));
  assert.ok(lines.includes('IDP_CLIENT_ID: unknown option (did you mean idp_client_id?)'));
  assert.ok(lines.includes('completely_unrelated_thing: unknown option; remove it'));
  assert.ok(result.warnings.map(formatProblem).includes('autocert: is not supported by Portcullis; ignored'));
  const route = parse(base({ routes: [{ from: 'https://a.example.com', to: 'http://a:80', prefx: '/x' }] }));
  assert.equal(route.config, undefined);
  assert.deepEqual(route.problems.map(formatProblem), [
    'routes[0].prefx: unknown route option (did you mean prefix?)',
  ]);
  assert.deepEqual(route.warnings, []);
});

test('the policy key still works, with a deprecation warning; its routes come first', () => {
  const result = parse({
    insecure_server: true,
    ...SIGN_IN,
    policy: [{ from: 'https://old.example.com', to: 'http://a:80' }],
    routes: [{ from: 'https://new.example.com', to: 'http://b:80' }],
  });
  assert.deepEqual(result.problems, []);
  assert.deepEqual(
    result.config?.routes.map((route) => route.from.hostname),
    ['old.example.com', 'new.example.com'],
  );
  assert.ok(
    result.warnings.some(
      (warning) => warning.path === 'policy' && /deprecated; rename it to `routes`/.test(warning.message),
    ),
  );
});

test('wrong types and empty values name the key', () => {
  const list = problems(
    base({
      insecure_server: 'maybe',
      xff_num_trusted_hops: 'two',
      tracing_sampling_rate: 2,
      timeout_idle: 30,
      address: '',
      cookie_domain: null,
      idp_scopes: {},
    }),
  );
  assertProblem(list, 'insecure_server', 'expected a boolean (true or false), got "maybe"');
  assertProblem(list, 'xff_num_trusted_hops', 'expected a whole number, got "two"');
  assertProblem(list, 'tracing_sampling_rate', 'between 0 and 1');
  assertProblem(list, 'timeout_idle', 'expected a duration');
  assertProblem(list, 'address', 'is not an address');
  assertProblem(list, 'cookie_domain', 'has no value');
  assertProblem(list, 'idp_scopes', 'expected a list of strings');
});

test('a document that is not a map is one clear error', () => {
  assertProblem(parse(['a']).problems, '', 'must hold a map of options');
});

test('every problem is reported together, never just the first', () => {
  const result = parse({
    address: 'nope',
    log_level: 'loud',
    services: 'web',
    routes: [
      { from: 'https://a.example.com/x', to: 'http://a:80' },
      { from: 'a.example.com', to: 'ftp://b' },
      { from: 'https://c.example.com', to: 'http://c', redirect: { response_code: 300 } },
    ],
  });
  const paths = result.problems.map((problem) => problem.path);
  for (const path of [
    'address',
    'log_level',
    'services',
    'certificate',
    'routes[0].from',
    'routes[1].from',
    'routes[1].to',
    'routes[2].redirect',
  ]) {
    assert.ok(paths.includes(path), `missing ${path} in ${paths.join(', ')}`);
  }
});

test('log_level accepts the peer spellings and rejects others with a hint', () => {
  assertProblem(
    problems(base({ log_level: 'verbose' })),
    'log_level',
    'is not one of trace, debug, info, warn, error, fatal, silent',
  );
  assertProblem(problems(base({ log_level: 'inf' })), 'log_level', 'did you mean info?');
});

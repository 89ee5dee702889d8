// Identity-provider settings exactly as spec section 2 says, and the self-hosting rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IDP_PROVIDERS } from '../../../src/config/types.js';
import { assertProblem, base, parse, problems, valid } from './helpers.js';

const SELF_HOSTED = base({
  authenticate_service_url: 'https://auth.example.com',
  idp_provider: 'google',
  idp_client_id: 'client-id',
  idp_client_secret: 'client-secret',
});

function without(key: string): Record<string, unknown> {
  const copy = { ...SELF_HOSTED };
  delete copy[key];
  return copy;
}

test('the hosted authenticate service needs no identity-provider settings', () => {
  const config = valid(base());
  assert.equal(config.authenticate_service_url, undefined);
  assert.equal(config.idp_client_id, undefined);
});

test('identity settings with the hosted service warn that they are ignored', () => {
  const result = parse(base({ idp_client_id: 'x', idp_provider: 'google' }));
  assert.deepEqual(result.problems, []);
  assert.ok(
    result.warnings.some(
      (warning) => warning.path === 'idp_client_id' && /hosted authenticate/.test(warning.message),
    ),
  );
});

test('self-hosting: a complete provider config is valid', () => {
  const config = valid(SELF_HOSTED);
  assert.equal(config.idp_provider, 'google');
  assert.equal(config.idp_client_id, 'client-id');
  assert.equal(config.idp_client_secret?.reveal(), 'client-secret');
});

test('self-hosting: idp_client_id is required', () => {
  assertProblem(
    problems(without('idp_client_id')),
    'idp_client_id',
    'is required when self-hosting authenticate',
  );
});

test('self-hosting: exactly one of idp_client_secret and idp_client_secret_file (neither, or both, names both keys)', () => {
  const neither = problems(without('idp_client_secret'));
  assertProblem(
    neither,
    'idp_client_secret',
    'set exactly one of idp_client_secret and idp_client_secret_file',
  );
  const both = problems({ ...SELF_HOSTED, idp_client_secret_file: '/s' }, {}, { '/s': 'x' });
  assertProblem(
    both,
    'idp_client_secret_file',
    'set only one of idp_client_secret and idp_client_secret_file',
  );
  const file = valid(
    { ...without('idp_client_secret'), idp_client_secret_file: '/s' },
    {},
    { '/s': 'from-file\n' },
  );
  assert.equal(file.idp_client_secret?.reveal(), 'from-file', 'the trailing newline is trimmed');
  const viaEnv = problems(SELF_HOSTED, { IDP_CLIENT_SECRET_FILE: '/s' }, { '/s': 'x' });
  assertProblem(
    viaEnv,
    'IDP_CLIENT_SECRET_FILE',
    'set only one of idp_client_secret and idp_client_secret_file',
  );
});

test('self-hosting: idp_provider or idp_provider_url is required; a URL alone means oidc', () => {
  assertProblem(problems(without('idp_provider')), 'idp_provider', 'set idp_provider (one of oidc, google');
  const config = valid({ ...without('idp_provider'), idp_provider_url: 'https://idp.example.com/realms/a' });
  assert.equal(config.idp_provider, 'oidc');
  assert.equal(config.idp_provider_url?.href, 'https://idp.example.com/realms/a');
});

test('idp_provider accepts every built-in short name and rejects anything else, listing them', () => {
  for (const provider of IDP_PROVIDERS) {
    const document = { ...SELF_HOSTED, idp_provider: provider, idp_provider_url: 'https://idp.example.com' };
    assert.equal(valid(document).idp_provider, provider);
  }
  assertProblem(
    problems({ ...SELF_HOSTED, idp_provider: 'keycloak' }),
    'idp_provider',
    '"keycloak" is not one of oidc, google, azure, okta, auth0, cognito, gitlab, onelogin, ping, apple, github',
  );
});

test('providers without a fixed URL require idp_provider_url', () => {
  for (const provider of ['oidc', 'okta', 'ping', 'auth0', 'cognito']) {
    assertProblem(
      problems({ ...SELF_HOSTED, idp_provider: provider }),
      'idp_provider_url',
      `is required with idp_provider ${provider}`,
    );
  }
  for (const provider of ['google', 'azure', 'gitlab', 'onelogin', 'apple', 'github']) {
    valid({ ...SELF_HOSTED, idp_provider: provider });
  }
});

test('idp_provider_url: the discovery suffix is stripped with a warning; https required except loopback', () => {
  const result = parse({
    ...SELF_HOSTED,
    idp_provider: 'oidc',
    idp_provider_url: 'https://idp.example.com/realms/a/.well-known/openid-configuration',
  });
  assert.deepEqual(result.problems, []);
  assert.equal(result.config?.idp_provider_url?.href, 'https://idp.example.com/realms/a');
  assert.ok(
    result.warnings.some(
      (warning) => warning.path === 'idp_provider_url' && /well-known/.test(warning.message),
    ),
  );
  assertProblem(
    problems({ ...SELF_HOSTED, idp_provider_url: 'http://idp.example.com' }),
    'idp_provider_url',
    'must use https',
  );
  for (const host of ['localhost:8080', '127.0.0.1:9000', '[::1]:9000']) {
    assert.equal(
      valid({ ...SELF_HOSTED, idp_provider_url: `http://${host}` }).idp_provider_url?.protocol,
      'http:',
    );
  }
  assertProblem(
    problems({ ...SELF_HOSTED, idp_provider_url: 'idp.example.com' }),
    'idp_provider_url',
    'is not a URL',
  );
});

test('authenticate_service_url must be a valid https URL with a host', () => {
  for (const bad of ['auth.example.com', 'ftp://auth.example.com', 'http://auth.example.com', '']) {
    const list = problems({ ...SELF_HOSTED, authenticate_service_url: bad });
    assertProblem(list, 'authenticate_service_url', bad === '' ? 'is empty' : '');
  }
});

test('idp_scopes default to openid, profile, email, offline_access; a list replaces them', () => {
  assert.deepEqual(valid(SELF_HOSTED).idp_scopes, ['openid', 'profile', 'email', 'offline_access']);
  assert.deepEqual(valid({ ...SELF_HOSTED, idp_scopes: 'openid,groups' }).idp_scopes, ['openid', 'groups']);
});

test('idp_request_params is a map of strings; wrong shapes are errors at their key', () => {
  assert.deepEqual(
    valid({ ...SELF_HOSTED, idp_request_params: { prompt: 'login', max_age: '60' } }).idp_request_params,
    {
      prompt: 'login',
      max_age: '60',
    },
  );
  // A number is not turned into text: YAML would already have made `1.10` 1.1.
  assertProblem(
    problems({ ...SELF_HOSTED, idp_request_params: { max_age: 60 } }),
    'idp_request_params.max_age',
    'expected a string, got the number 60; put it in quotes',
  );
  assertProblem(
    problems({ ...SELF_HOSTED, idp_request_params: ['prompt'] }),
    'idp_request_params',
    'expected a map',
  );
  assertProblem(
    problems({ ...SELF_HOSTED, idp_request_params: { prompt: ['a'] } }),
    'idp_request_params.prompt',
    'expected a string',
  );
  assertProblem(
    problems(SELF_HOSTED, { IDP_REQUEST_PARAMS: 'prompt=login' }),
    'IDP_REQUEST_PARAMS',
    'JSON object',
  );
});

test('running authenticate on its own requires its URL and the shared secrets', () => {
  const list = problems(base({ services: 'authenticate' }));
  assertProblem(
    list,
    'authenticate_service_url',
    'is required when the authenticate service runs on its own',
  );
  assertProblem(list, 'shared_secret', 'is required when services run in separate processes');
  assertProblem(list, 'cookie_secret', 'is required when authenticate or proxy run on their own');
});

test('jwt_claims_headers: list, comma string and header->claim map; invalid header names are rejected', () => {
  assert.deepEqual(valid(base({ jwt_claims_headers: ['email', 'given_name'] })).jwt_claims_headers, {
    'X-Portcullis-Claim-Email': 'email',
    'X-Portcullis-Claim-Given-Name': 'given_name',
  });
  assert.deepEqual(valid(base({ jwt_claims_headers: 'email groups' })).jwt_claims_headers, {
    'X-Portcullis-Claim-Email': 'email',
    'X-Portcullis-Claim-Groups': 'groups',
  });
  assert.deepEqual(valid(base({ jwt_claims_headers: { 'X-Email': 'email' } })).jwt_claims_headers, {
    'X-Email': 'email',
  });
  assertProblem(
    problems(base({ jwt_claims_headers: { 'X Email': 'email' } })),
    'jwt_claims_headers.X Email',
    'has invalid header name "X Email"',
  );
  assertProblem(
    problems(base({ jwt_claims_headers: [{ email: 'x' }] })),
    'jwt_claims_headers[0]',
    'expected a claim name',
  );
  assertProblem(
    problems(base({ jwt_claims_headers: ['a b'] })),
    'jwt_claims_headers[0]',
    'cannot form a header name',
  );
});

test('scopes, cookie names, cookie domains and redirect domains are checked for their form', () => {
  assertProblem(
    problems({ ...SELF_HOSTED, idp_scopes: [] }),
    'idp_scopes',
    'is empty; remove it to use the default',
  );
  assertProblem(
    problems({ ...SELF_HOSTED, idp_scopes: ['open id'] }),
    'idp_scopes',
    '"open id" is not a scope',
  );
  assertProblem(
    problems(base({ cookie_name: 'my cookie' })),
    'cookie_name',
    '"my cookie" is not a cookie name',
  );
  assertProblem(
    problems(base({ cookie_domain: 'https://example.com' })),
    'cookie_domain',
    'is not a domain name',
  );
  assertProblem(
    problems(base({ programmatic_redirect_domain_whitelist: ['localhost', 'https://cli.example.com/'] })),
    'programmatic_redirect_domain_whitelist',
    '"https://cli.example.com/" is not a host name',
  );
  assert.deepEqual(
    valid(base({ programmatic_redirect_domain_whitelist: 'localhost,127.0.0.1,[::1]' }))
      .programmatic_redirect_domain_whitelist,
    ['localhost', '127.0.0.1', '[::1]'],
  );
});

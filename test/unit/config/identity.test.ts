// Sign-in settings (spec section 5, issue 24): no hosted authenticate service exists, so a route
// that needs a user needs authenticate_service_url and an identity-provider client; the provider
// settings exactly as spec section 2 says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IDP_PROVIDERS } from '../../../src/config/types.js';
import { formatProblem } from '../../../src/shared/errors.js';
import { SIGN_IN } from '../../support/sign-in-config.js';
import { assertProblem, base, parse, problems, valid } from './helpers.js';

/** base() with google instead of the oidc URL: a provider with a fixed discovery URL. */
const SIGNED_IN = base({ idp_provider: 'google', idp_provider_url: undefined });

function without(...keys: string[]): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...base() };
  for (const key of keys) delete copy[key];
  return copy;
}

const PROTECTED = { from: 'https://app.example.com', to: 'http://10.0.0.1:8080' };
const PUBLIC = { ...PROTECTED, from: 'https://www.example.com', allow_public_unauthenticated_access: true };
const NOT_CONFIGURED = 'needs a signed-in user, but sign-in is not configured: set';

/** The problems as `path: message` lines, asserting the config was refused. */
function lines(document: Record<string, unknown>): string[] {
  const result = parse(document);
  assert.equal(result.config, undefined, 'expected problems');
  return result.problems.map(formatProblem);
}

test('a route that needs a user without any sign-in settings: one problem naming every setting', () => {
  assert.deepEqual(lines({ insecure_server: true, routes: [PROTECTED] }), [
    `routes[0]: ${NOT_CONFIGURED} authenticate_service_url, idp_provider_url (or idp_provider), idp_client_id and idp_client_secret (or idp_client_secret_file)`,
  ]);
});

test('each missing sign-in setting is named alone, in the one problem', () => {
  const cases: [string[], string][] = [
    [['authenticate_service_url'], 'authenticate_service_url'],
    [['idp_provider_url'], 'idp_provider_url (or idp_provider)'],
    [['idp_client_id'], 'idp_client_id'],
    [['idp_client_secret'], 'idp_client_secret (or idp_client_secret_file)'],
    [
      ['idp_client_id', 'idp_client_secret'],
      'idp_client_id and idp_client_secret (or idp_client_secret_file)',
    ],
  ];
  for (const [keys, named] of cases) {
    assert.deepEqual(lines(without(...keys)), [`routes[0]: ${NOT_CONFIGURED} ${named}`], keys.join(','));
  }
});

test('several routes that need a user give one problem, at the first; public routes need nothing', () => {
  const routes = [
    PUBLIC,
    PROTECTED,
    { ...PROTECTED, from: 'https://b.example.com' },
    { ...PROTECTED, from: 'https://c.example.com' },
  ];
  assert.deepEqual(
    lines({ insecure_server: true, ...SIGN_IN, authenticate_service_url: undefined, routes }),
    [
      `routes[1]: needs a signed-in user (as do 2 other routes), but sign-in is not configured: set authenticate_service_url`,
    ],
  );
  const onlyPublic = parse({ insecure_server: true, routes: [PUBLIC] });
  assert.deepEqual([...onlyPublic.problems, ...onlyPublic.warnings], []);
  assert.equal(onlyPublic.config?.authenticate_service_url, undefined);
});

test('identity-provider settings without a route that needs them are fine, with no warning', () => {
  for (const document of [
    { insecure_server: true, ...SIGN_IN, routes: [PUBLIC] },
    { insecure_server: true, idp_client_id: 'x', idp_provider: 'google' },
  ]) {
    const result = parse(document);
    assert.deepEqual([...result.problems, ...result.warnings], [], JSON.stringify(document));
  }
});

test('a complete sign-in config is valid', () => {
  const config = valid(SIGNED_IN);
  assert.equal(config.authenticate_service_url?.href, 'https://authenticate.example.com/');
  assert.equal(config.idp_provider, 'google');
  assert.equal(config.idp_client_id, 'portcullis-test');
  assert.equal(config.idp_client_secret?.reveal(), 'portcullis-test-secret');
});

test('a route with its own client needs no global client; both keys or neither; not empty', () => {
  const own = { ...PROTECTED, idp_client_id: 'app', idp_client_secret: 'app-secret' };
  const config = valid({ ...without('idp_client_id', 'idp_client_secret'), routes: [own] });
  assert.equal(config.routes[0]?.idp_client_id, 'app');
  assert.equal(config.routes[0]?.idp_client_secret?.reveal(), 'app-secret');
  assert.deepEqual(lines({ ...without('idp_client_id', 'idp_client_secret'), routes: [own, PROTECTED] }), [
    `routes[1]: ${NOT_CONFIGURED} idp_client_id and idp_client_secret (or idp_client_secret_file)`,
  ]);
  assert.deepEqual(lines({ ...without('authenticate_service_url'), routes: [own] }), [
    `routes[0]: ${NOT_CONFIGURED} authenticate_service_url`,
  ]);
  assert.deepEqual(lines(base({ routes: [{ ...PROTECTED, idp_client_id: 'app' }] })), [
    'routes[0]: per-route identity-provider credentials need both idp_client_id and idp_client_secret',
  ]);
  assert.deepEqual(lines(base({ routes: [{ ...own, idp_client_id: ' ', idp_client_secret: '' }] })), [
    'routes[0].idp_client_id: is empty; give the client id issued by the identity provider',
    'routes[0].idp_client_secret: is empty',
  ]);
  const secret = JSON.stringify(parse(base({ routes: [{ ...own, idp_client_secret: 42 }] })));
  assert.ok(secret.includes('the value is secret') && !secret.includes('42'), 'the secret is not echoed');
});

test('idp_client_id must not be empty; exactly one of idp_client_secret and idp_client_secret_file', () => {
  assertProblem(problems(base({ idp_client_id: '' })), 'idp_client_id', 'is empty; give the client id');
  const both = problems(base({ idp_client_secret_file: '/s' }), {}, { '/s': 'x' });
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
  const viaEnv = problems(base(), { IDP_CLIENT_SECRET_FILE: '/s' }, { '/s': 'x' });
  assertProblem(
    viaEnv,
    'IDP_CLIENT_SECRET_FILE',
    'set only one of idp_client_secret and idp_client_secret_file',
  );
});

test('idp_provider_url alone means oidc; idp_provider alone works for providers with a fixed URL', () => {
  const config = valid(base({ idp_provider_url: 'https://idp.example.com/realms/a' }));
  assert.equal(config.idp_provider, 'oidc');
  assert.equal(config.idp_provider_url?.href, 'https://idp.example.com/realms/a');
  assert.equal(valid(SIGNED_IN).idp_provider_url, undefined);
});

test('idp_provider accepts every built-in short name and rejects anything else, listing them', () => {
  for (const provider of IDP_PROVIDERS) {
    const document = base({ idp_provider: provider, idp_provider_url: 'https://idp.example.com' });
    assert.equal(valid(document).idp_provider, provider);
  }
  assertProblem(
    problems(base({ idp_provider: 'keycloak' })),
    'idp_provider',
    '"keycloak" is not one of oidc, google, azure, okta, auth0, cognito, gitlab, onelogin, ping, apple, github',
  );
});

test('providers without a fixed URL require idp_provider_url', () => {
  for (const provider of ['oidc', 'okta', 'ping', 'auth0', 'cognito']) {
    assert.deepEqual(lines({ ...SIGNED_IN, idp_provider: provider }), [
      `idp_provider_url: is required with idp_provider ${provider}: its discovery base URL`,
    ]);
  }
  for (const provider of ['google', 'azure', 'gitlab', 'onelogin', 'apple', 'github']) {
    valid({ ...SIGNED_IN, idp_provider: provider });
  }
});

test('idp_provider_url: the discovery suffix is stripped with a warning; https required except loopback', () => {
  const result = parse(
    base({ idp_provider_url: 'https://idp.example.com/realms/a/.well-known/openid-configuration' }),
  );
  assert.deepEqual(result.problems, []);
  assert.equal(result.config?.idp_provider_url?.href, 'https://idp.example.com/realms/a');
  assert.deepEqual(result.warnings.map(formatProblem), [
    'idp_provider_url: ends with /.well-known/openid-configuration; using https://idp.example.com/realms/a (give the base URL without that suffix)',
  ]);
  assertProblem(
    problems(base({ idp_provider_url: 'http://idp.example.com' })),
    'idp_provider_url',
    'must use https',
  );
  for (const host of ['localhost:8080', '127.0.0.1:9000', '[::1]:9000', 'idp.localhost:9000']) {
    assert.equal(valid(base({ idp_provider_url: `http://${host}` })).idp_provider_url?.protocol, 'http:');
  }
  assertProblem(problems(base({ idp_provider_url: 'idp.example.com' })), 'idp_provider_url', 'is not a URL');
});

test('authenticate_service_url: https, or http only with insecure_server', () => {
  assert.equal(
    valid(base({ authenticate_service_url: 'http://auth.localhost:8000' })).authenticate_service_url?.port,
    '8000',
  );
  const tls = { ...base({ insecure_server: false, authenticate_service_url: 'http://auth.example.com' }) };
  const result = parse(tls);
  assert.ok(
    result.problems
      .map(formatProblem)
      .includes(
        'authenticate_service_url: "http://auth.example.com/" must use https: plain http is allowed only with insecure_server: true, where the listener serves plain HTTP',
      ),
    JSON.stringify(result.problems),
  );
  for (const bad of ['auth.example.com', 'ftp://auth.example.com', '']) {
    const list = problems(base({ authenticate_service_url: bad }));
    assertProblem(list, 'authenticate_service_url', bad === '' ? 'is empty' : '');
  }
  assertProblem(
    problems(base(), { AUTHENTICATE_SERVICE_URL: 'https://auth.example.com/x' }),
    'AUTHENTICATE_SERVICE_URL',
    'must be an origin without a path',
  );
});

test('authenticate_service_url: an origin, with a host no route uses', () => {
  for (const url of [
    'https://auth.example.com/sso',
    'https://auth.example.com/?a=1',
    'https://auth.example.com/#x',
  ]) {
    assert.deepEqual(lines(base({ authenticate_service_url: url })), [
      `authenticate_service_url: "${url}" must be an origin without a path, query or fragment (such as https://auth.example.com): the sign-in paths on it are fixed`,
    ]);
  }
  assert.deepEqual(lines(base({ authenticate_service_url: 'https://APP.example.com:8443' })), [
    'authenticate_service_url: has the host app.example.com of routes[0]: the authenticate service needs a host no route uses (such as authenticate.example.com), since Portcullis answers every path on it',
  ]);
  valid(base({ authenticate_service_url: 'https://auth.example.com/' }));
  valid(
    base({
      routes: [{ ...PROTECTED, from: 'https://*.example.com' }],
      authenticate_service_url: 'https://auth.example.com',
    }),
  );
});

test("idp_scopes: unset means the provider's defaults; a list replaces them", () => {
  assert.equal(valid(base()).idp_scopes, undefined);
  assert.deepEqual(valid(base({ idp_scopes: 'openid,groups' })).idp_scopes, ['openid', 'groups']);
});

test('cookie defaults: _portcullis, SameSite lax, HttpOnly, 14h; SameSite none needs https', () => {
  const config = valid(base());
  assert.equal(config.cookie_name, '_portcullis');
  assert.equal(config.cookie_same_site, 'lax');
  assert.equal(config.cookie_http_only, true);
  assert.equal(config.cookie_expire_ms, 14 * 3600 * 1000);
  assert.equal(valid(base({ cookie_same_site: '' })).cookie_same_site, '');
  assert.deepEqual(lines(base({ cookie_same_site: 'none' })), [
    'cookie_same_site: none needs the Secure attribute (browsers drop a SameSite=None cookie without it), but with insecure_server: true cookies are not Secure; use lax or strict',
  ]);
});

test('programmatic_redirect_domain_whitelist: host names only, compared as URL host names', () => {
  assert.deepEqual(valid(base()).programmatic_redirect_domain_whitelist, ['localhost']);
  assert.deepEqual(
    valid(base({ programmatic_redirect_domain_whitelist: 'localhost,127.0.0.1,[::1],::2,CLI.Example.com.' }))
      .programmatic_redirect_domain_whitelist,
    ['localhost', '127.0.0.1', '[::1]', '[::2]', 'cli.example.com'],
  );
  for (const bad of [
    'https://cli.example.com/',
    '*.example.com',
    'cli.example.com:8000',
    'a_b.example.com',
    '-a.example.com',
    'a..b',
  ]) {
    assert.deepEqual(lines(base({ programmatic_redirect_domain_whitelist: ['localhost', bad] })), [
      `programmatic_redirect_domain_whitelist: "${bad}" is not a host name; give names such as localhost or app.example.com (no scheme, port, path or wildcard)`,
    ]);
  }
});

test('idp_request_params is a map of strings; wrong shapes are errors at their key', () => {
  assert.deepEqual(
    valid(base({ idp_request_params: { prompt: 'login', max_age: '60' } })).idp_request_params,
    {
      prompt: 'login',
      max_age: '60',
    },
  );
  // A number is not turned into text: YAML would already have made `1.10` 1.1.
  assertProblem(
    problems(base({ idp_request_params: { max_age: 60 } })),
    'idp_request_params.max_age',
    'expected a string, got the number 60; put it in quotes',
  );
  assertProblem(problems(base({ idp_request_params: ['prompt'] })), 'idp_request_params', 'expected a map');
  assertProblem(
    problems(base({ idp_request_params: { prompt: ['a'] } })),
    'idp_request_params.prompt',
    'expected a string',
  );
  assertProblem(
    problems(base(), { IDP_REQUEST_PARAMS: 'prompt=login' }),
    'IDP_REQUEST_PARAMS',
    'JSON object',
  );
});

test('running authenticate on its own requires its URL and the shared secrets', () => {
  const list = problems({ ...without('authenticate_service_url'), services: 'authenticate' });
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
  assertProblem(problems(base({ idp_scopes: [] })), 'idp_scopes', 'is empty; remove it to use the default');
  assertProblem(problems(base({ idp_scopes: ['open id'] })), 'idp_scopes', '"open id" is not a scope');
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

test('an http:// identity provider is allowed only on this machine; elsewhere it must be https', () => {
  for (const local of [
    'http://127.0.0.1:9000',
    'http://[::1]:9000',
    'http://localhost:9000',
    'http://idp.localhost',
  ])
    assert.equal(valid(base({ idp_provider_url: local })).idp_provider_url?.protocol, 'http:', local);
  assert.equal(
    valid(base({ idp_provider_url: 'https://idp.example.com' })).idp_provider_url?.protocol,
    'https:',
  );
  const refused = lines(base({ idp_provider_url: 'http://idp.example.com' }));
  assert.ok(
    refused.some((line) => line.startsWith('idp_provider_url: "http://idp.example.com" must use https')),
    refused.join('\n'),
  );
});

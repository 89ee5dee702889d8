// Several identity providers at once: `identity_providers` names providers (each read as the
// global idp_* keys are), routes choose one with `identity_provider`, and each chosen provider
// becomes its own client with its own id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_PROVIDER_NAME,
  identityProviderFor,
  identityProviders,
} from '../../../src/config/identity-provider.js';
import { translate } from '../../../src/translate/translate.js';
import { translateSignIn } from '../../../src/translate/services.js';
import { parseSource } from '../../../src/config/formats.js';
import { assertProblem, base, problems, valid } from './helpers.js';

const PARTNER = {
  provider_url: 'https://partner-idp.example.com',
  client_id: 'partner-client',
  client_secret: 'partner-secret',
};
const STAFF_ROUTE = { from: 'https://staff.example.com', to: 'http://10.0.0.1:8080' };
const PARTNER_ROUTE = {
  from: 'https://partner.example.com',
  to: 'http://10.0.0.2:8080',
  identity_provider: 'partner',
};

function twoProviders(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return base({ identity_providers: { partner: PARTNER }, routes: [STAFF_ROUTE, PARTNER_ROUTE], ...extra });
}

test('a route naming a provider signs in with it; a route without one keeps the global provider', () => {
  const config = valid(twoProviders());
  const [staff, partner] = config.routes;
  assert.ok(staff !== undefined && partner !== undefined);
  const global = identityProviderFor(config, staff);
  const named = identityProviderFor(config, partner);
  assert.equal(global?.name, DEFAULT_PROVIDER_NAME);
  assert.equal(named?.name, 'partner');
  assert.equal(named?.providerUrl?.href, 'https://partner-idp.example.com/');
  assert.equal(named?.clientId, 'partner-client');
  assert.equal(named?.clientSecret.reveal(), 'partner-secret');
  assert.equal(named?.provider, 'oidc');
  assert.notEqual(global?.id, named?.id, 'sessions of one never count on routes of the other');
  // `default` names the global provider explicitly.
  assert.equal(identityProviderFor(config, { identity_provider: 'default' })?.id, global?.id);
  assert.deepEqual(
    identityProviders(config).map((idp) => idp.name),
    ['default', 'partner'],
  );
});

test("a route's own client replaces the chosen provider's client, on that provider", () => {
  const config = valid(
    twoProviders({
      routes: [{ ...PARTNER_ROUTE, idp_client_id: 'app-client', idp_client_secret: 'app-secret' }],
    }),
  );
  const route = config.routes[0];
  const own = identityProviderFor(config, route);
  assert.equal(own?.name, 'partner');
  assert.equal(own?.clientId, 'app-client');
  assert.equal(own?.providerUrl?.href, 'https://partner-idp.example.com/');
  assert.deepEqual(
    identityProviders(config).map((idp) => [idp.name, idp.clientId]),
    [
      ['default', 'portcullis-test'],
      ['partner', 'partner-client'],
      ['partner', 'app-client'],
    ],
  );
});

test('a named provider alone is enough: no global idp_* keys needed for its routes', () => {
  const document = twoProviders({ routes: [PARTNER_ROUTE] });
  for (const key of ['idp_provider', 'idp_provider_url', 'idp_client_id', 'idp_client_secret'])
    delete document[key];
  const config = valid(document);
  assert.equal(identityProviderFor(config, config.routes[0])?.name, 'partner');
  // ...but a route on the default provider then lacks it.
  const lines = problems({ ...document, routes: [PARTNER_ROUTE, STAFF_ROUTE] });
  assertProblem(lines, 'routes[1]', 'sign-in is not configured: set idp_provider_url (or idp_provider)');
});

test('an unknown provider name is an error at the route key, listing the defined names', () => {
  const lines = problems(twoProviders({ routes: [{ ...PARTNER_ROUTE, identity_provider: 'partnr' }] }));
  assert.deepEqual(lines, [
    'routes[0].identity_provider: "partnr" is not a defined identity provider (did you mean partner?); the defined ones are default, partner (add it under identity_providers, or spec.identityProviders of the Portcullis object)',
  ]);
  assertProblem(
    problems(base({ routes: [{ ...STAFF_ROUTE, identity_provider: 7 }] })),
    'routes[0].identity_provider',
    'expected a string',
  );
});

test('each entry key is read and checked as its idp_* namesake, errors naming identity_providers.<name>.<key>', () => {
  const at = (entry: Record<string, unknown>): string[] =>
    problems(twoProviders({ identity_providers: { partner: { ...PARTNER, ...entry } } }));
  assertProblem(
    at({ provider: 'hosted' }),
    'identity_providers.partner.provider',
    'no hosted authenticate service',
  );
  assertProblem(at({ provider: 'nope' }), 'identity_providers.partner.provider', 'is not one of oidc');
  assertProblem(
    at({ provider_url: 'http://idp.example.com' }),
    'identity_providers.partner.provider_url',
    'must use https',
  );
  assertProblem(
    at({ provider_url: 'https://idp.example.com/?x=1' }),
    'identity_providers.partner.provider_url',
    'has a query or fragment',
  );
  assertProblem(at({ client_id: ' ' }), 'identity_providers.partner.client_id', 'is empty');
  assertProblem(at({ client_secret: 5 }), 'identity_providers.partner.client_secret', 'not shown');
  assertProblem(at({ scopes: ['email'] }), 'identity_providers.partner.scopes', 'lacks openid');
  assertProblem(
    at({ request_params: { scope: 'x' } }),
    'identity_providers.partner.request_params.scope',
    'use identity_providers.partner.scopes for the scopes',
  );
  assertProblem(
    at({ trust_unverified_email: 'yes' }),
    'identity_providers.partner.trust_unverified_email',
    'expected a boolean',
  );
  assertProblem(at({ scope: ['openid'] }), 'identity_providers.partner.scope', 'did you mean scopes?');
  assertProblem(
    at({ provider: 'okta', provider_url: undefined }),
    'identity_providers.partner.provider_url',
    'is required with identity_providers.partner.provider okta',
  );
});

test('an entry needs a provider and a client; client_secret_file reads the secret; both forms is an error', () => {
  const entry = (value: Record<string, unknown>, files: Record<string, string> = {}): string[] =>
    problems(twoProviders({ identity_providers: { partner: value } }), {}, files);
  assert.deepEqual(entry({ provider_url: PARTNER.provider_url }), [
    'identity_providers.partner.client_id: is required: a named provider is complete on its own',
    'identity_providers.partner.client_secret: is required (or client_secret_file): a named provider is complete on its own',
  ]);
  assertProblem(
    entry({ client_id: 'c', client_secret: 's' }),
    'identity_providers.partner.provider_url',
    'is required (or provider)',
  );
  const { client_secret: _secret, ...withoutSecret } = PARTNER;
  const config = valid(
    twoProviders({ identity_providers: { partner: { ...withoutSecret, client_secret_file: '/run/s' } } }),
    {},
    { '/run/s': 'from-file\n' },
  );
  assert.equal(config.identity_providers?.partner?.client_secret.reveal(), 'from-file');
  assertProblem(
    entry({ ...PARTNER, client_secret_file: '/run/s' }, { '/run/s': 'x' }),
    'identity_providers.partner.client_secret_file',
    'set only one of',
  );
  assertProblem(
    entry({ ...withoutSecret, client_secret_file: '/missing' }),
    'identity_providers.partner.client_secret_file',
    'cannot read /missing',
  );
});

test('provider names: default is reserved, the form is checked, the value must be a map', () => {
  assertProblem(
    problems(twoProviders({ identity_providers: { default: PARTNER } })),
    'identity_providers.default',
    'is reserved for the provider of the global idp_* keys',
  );
  assertProblem(
    problems(twoProviders({ identity_providers: { 'Bad Name': PARTNER } })),
    'identity_providers.Bad Name',
    'is not a provider name',
  );
  assertProblem(
    problems(twoProviders({ identity_providers: ['x'] })),
    'identity_providers',
    'expected a map',
  );
  assertProblem(
    problems(twoProviders({ identity_providers: { partner: 'x' } })),
    'identity_providers.partner',
    'as text, write it as a JSON object',
  );
});

test('from the environment: IDENTITY_PROVIDERS as a JSON object; malformed JSON names the variable', () => {
  const document = twoProviders();
  delete document.identity_providers;
  const config = valid(document, { IDENTITY_PROVIDERS: JSON.stringify({ partner: PARTNER }) });
  assert.equal(config.identity_providers?.partner?.client_id, 'partner-client');
  assertProblem(
    problems(document, { IDENTITY_PROVIDERS: '{partner:' }),
    'IDENTITY_PROVIDERS',
    'write it as a JSON object',
  );
  assertProblem(
    problems(document, {
      IDENTITY_PROVIDERS: JSON.stringify({ partner: { ...PARTNER, provider: 'hosted' } }),
    }),
    'IDENTITY_PROVIDERS.partner.provider',
    'no hosted authenticate service',
  );
});

test('translate: routes carry their provider id, the IR lists every provider with its name', () => {
  const config = valid(twoProviders());
  const result = translate(config, { systemCaFile: '/ca.pem' });
  assert.deepEqual(result.problems, []);
  const byHost = new Map(result.ir?.virtualHosts.map((host) => [host.name, host.routes[0]]));
  const staff = byHost.get('staff.example.com');
  const partner = byHost.get('partner.example.com');
  assert.ok(staff !== undefined && partner !== undefined);
  assert.equal(staff.idpId, identityProviderFor(config, config.routes[0])?.id);
  assert.equal(partner.idpId, identityProviderFor(config, config.routes[1])?.id);
  assert.notEqual(staff.idpId, partner.idpId);
  const providers = translateSignIn(config)?.providers ?? [];
  const partnerIr = providers.find((provider) => provider.name === 'partner');
  assert.equal(partnerIr?.id, partner.idpId);
  assert.equal(partnerIr?.providerUrl, 'https://partner-idp.example.com/');
  assert.equal(providers.find((provider) => provider.name === 'default')?.id, staff.idpId);
  assert.equal(JSON.stringify(providers).includes('partner-secret'), false, 'no secret in the IR');
});

test('in a properties file: one provider as identity_providers.<name>, its settings as JSON', () => {
  const source = parseSource(
    [
      ...Object.entries(base())
        .filter(([key]) => key !== 'routes')
        .map(([key, value]) => `${key}=${String(value)}`),
      `identity_providers.partner=${JSON.stringify(PARTNER)}`,
      `routes=${JSON.stringify([PARTNER_ROUTE])}`,
    ].join('\n'),
    'properties',
  );
  assert.ok('document' in source, JSON.stringify(source));
  const config = valid(source.document);
  assert.equal(config.identity_providers?.partner?.client_id, 'partner-client');
  assert.equal(identityProviderFor(config, config.routes[0])?.name, 'partner');
});

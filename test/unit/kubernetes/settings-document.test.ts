// The Portcullis settings object -> config document -> parseConfig, with problems named by the
// object's fields and Secrets: a bad enum, a bad URL, a missing Secret or key, an inline secret,
// an unknown field; and no Secret value in any problem.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { parseConfig } from '../../../src/config/parse-config.js';
import { formatProblem } from '../../../src/shared/errors.js';
import type { ReadSecret, SecretData } from '../../../src/kubernetes/secret-refs.js';
import { refuseFileRead, settingsDocument } from '../../../src/kubernetes/settings-document.js';
import { generateTestCertificate } from '../../support/test-certs.js';

const SHARED_SECRET = randomBytes(32).toString('base64');
const COOKIE_SECRET = randomBytes(32).toString('base64');
const SIGNING_KEY = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();
const CLIENT_SECRET = `client-secret-${randomBytes(8).toString('hex')}`;

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

/** A Secret store: `ns/name` -> key -> text (kubectl's files end in a newline). */
function secrets(store: Record<string, Record<string, string>>): ReadSecret {
  return ({ namespace, name }) => {
    const data = store[`${namespace}/${name}`];
    if (data === undefined) return undefined;
    return Object.fromEntries(Object.entries(data).map(([key, text]) => [key, bytes(text)])) as SecretData;
  };
}

const STORE = {
  'portcullis/core': {
    shared_secret: `${SHARED_SECRET}\n`,
    cookie_secret: COOKIE_SECRET,
    signing_key: SIGNING_KEY,
  },
  'portcullis/idp': { client_id: 'portcullis', client_secret: `${CLIENT_SECRET}\n` },
  'portcullis/idp-params': { login_hint: 'someone@example.com' },
  'storage/redis': { connection: 'redis://127.0.0.1:6379/0' },
};

/** A complete spec; `extra` is merged in (group by group). */
function spec(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const base: Record<string, unknown> = {
    insecureServer: true,
    address: ':8080',
    authenticate: { url: 'https://authenticate.example.com' },
    secrets: { name: 'core' },
    identityProvider: {
      provider: 'oidc',
      url: 'https://idp.example.com/realms/main',
      secret: { name: 'idp' },
      scopes: ['openid', 'email', 'groups'],
      requestParams: { prompt: 'login' },
      requestParamsSecret: { name: 'idp-params' },
    },
    cookie: { name: '_kube', expire: '8h', sameSite: 'strict' },
    storage: { type: 'redis', connection: { name: 'redis', namespace: 'storage' } },
    jwtClaimHeaders: { 'X-Email': 'email' },
    logLevel: 'warn',
  };
  for (const [key, value] of Object.entries(extra)) {
    const current = base[key];
    base[key] =
      typeof current === 'object' && current !== null && typeof value === 'object' && value !== null
        ? { ...current, ...value }
        : value;
  }
  return base;
}

/** The object's own problems and validate's, all as `field: message` lines. */
function check(objectSpec: unknown, store: Record<string, Record<string, string>> = STORE) {
  const settings = settingsDocument({
    spec: objectSpec,
    namespace: 'portcullis',
    readSecret: secrets(store),
  });
  const parsed = parseConfig({ document: settings.document, env: {}, readText: refuseFileRead });
  const lines = [...settings.problems, ...settings.fieldProblems(parsed.problems)].map(formatProblem);
  return { settings, parsed, lines };
}

test('a complete object becomes a valid config, with Secrets read and trimmed', () => {
  const { settings, parsed, lines } = check(spec());
  assert.deepEqual(lines, []);
  const config = parsed.config;
  assert.ok(config);
  assert.equal(settings.document.idp_client_id, 'portcullis');
  assert.equal(settings.document.idp_client_secret, CLIENT_SECRET, 'trailing newline trimmed');
  assert.equal(settings.document.shared_secret, SHARED_SECRET);
  assert.deepEqual(settings.document.idp_request_params, {
    prompt: 'login',
    login_hint: 'someone@example.com',
  });
  assert.equal(settings.document.databroker_storage_type, 'redis');
  assert.equal(settings.document.cookie_name, '_kube');
  assert.equal(settings.document.routes, undefined);
  assert.deepEqual(
    settings.secrets.map(({ namespace, name }) => `${namespace}/${name}`),
    ['portcullis/core', 'portcullis/idp', 'storage/redis', 'portcullis/idp-params'],
  );
  assert.equal(config.cookie_name, '_kube');
  assert.equal(config.log_level, 'warn');
});

test('a bad enum, a bad URL and a missing Secret key are named by their fields', () => {
  const { lines } = check(
    spec({
      identityProvider: { provider: 'oidcc', url: 'not a url' },
      storage: { type: 'redis', connection: { name: 'core' } },
    }),
  );
  const at = (field: string) => lines.filter((line) => line.startsWith(`${field}: `));
  assert.equal(at('spec.identityProvider.provider').length, 1, lines.join('\n'));
  assert.match(at('spec.identityProvider.provider')[0] ?? '', /"oidcc" is not one of .*did you mean oidc/);
  assert.equal(at('spec.identityProvider.url').length, 1, lines.join('\n'));
  assert.deepEqual(at('spec.storage.connection'), [
    'spec.storage.connection: Secret portcullis/core has no key connection',
  ]);
  assert.ok(
    lines.every((line) => line.startsWith('spec.')),
    `every problem names a field:\n${lines.join('\n')}`,
  );
});

test('a missing Secret is named with the field that references it', () => {
  const { lines } = check(spec({ secrets: { name: 'nope' } }));
  assert.ok(lines.includes('spec.secrets: Secret portcullis/nope not found'), lines.join('\n'));
});

test('a key missing from a shared Secret: validate asks for it by field and key', () => {
  const store = { ...STORE, 'portcullis/idp': { client_id: 'portcullis' } };
  const settings = settingsDocument({ spec: spec(), namespace: 'portcullis', readSecret: secrets(store) });
  assert.deepEqual(settings.problems, [], 'a shared Secret may leave keys out; validate decides');
  // Routes come from Ingress objects; one that needs a user makes the client secret required.
  const document = {
    ...settings.document,
    routes: [{ from: 'https://app.example.com', to: 'http://10.0.0.1' }],
  };
  const parsed = parseConfig({ document, env: {}, readText: refuseFileRead });
  const lines = settings.fieldProblems(parsed.problems).map(formatProblem);
  const line = lines.find((text) => text.startsWith('routes[0]: '));
  assert.ok(line, lines.join('\n'));
  assert.match(line, /set spec\.identityProvider\.secret \(key client_secret\)/);
  assert.doesNotMatch(line, /idp_client_(id|secret)\b/, 'messages name fields, not file keys');
});

test('a secret written inline is refused: secret options only name Secrets', () => {
  const { lines } = check(spec({ secrets: SHARED_SECRET, storage: { connection: 'redis://x' } }));
  assert.ok(
    lines.includes(
      'spec.secrets: must name a Secret as {name, namespace}; secret values are never written in the Portcullis object',
    ),
    lines.join('\n'),
  );
  assert.ok(
    lines.some((line) =>
      line.startsWith('spec.storage.connection: must name a Secret as {name, namespace, key}'),
    ),
  );
  assert.ok(!lines.some((line) => line.includes(SHARED_SECRET)));
});

test('unknown fields are errors with a did-you-mean, at any depth', () => {
  const { lines } = check(
    spec({ cookie: { nme: 'x' }, logLevl: 'info', identityProvider: { secret: { name: 'idp', kee: 'x' } } }),
  );
  assert.ok(lines.includes('spec.cookie.nme: unknown field (did you mean name?)'), lines.join('\n'));
  assert.ok(lines.includes('spec.logLevl: unknown field (did you mean logLevel?)'), lines.join('\n'));
  assert.ok(
    lines.includes(
      'spec.identityProvider.secret.kee: unknown field; a Secret reference is {name, namespace}',
    ),
  );
});

test('bad Secret values are named by field and key, and never echoed', () => {
  const badShared = `not-base64-${randomBytes(6).toString('hex')}!`;
  const badKey = `garbage-key-${randomBytes(6).toString('hex')}`;
  const store = {
    ...STORE,
    'portcullis/core': { ...STORE['portcullis/core'], shared_secret: badShared },
    'portcullis/tls': { 'tls.crt': 'also-not-pem', 'tls.key': badKey },
  };
  const { lines } = check(spec({ certificates: [{ name: 'tls' }], insecureServer: false }), store);
  const shared = lines.find((line) => line.startsWith('spec.secrets: '));
  assert.ok(shared?.endsWith('(key shared_secret of Secret portcullis/core)'), lines.join('\n'));
  assert.ok(
    lines.includes('spec.certificates[0]: key tls.key of Secret portcullis/tls is not PEM'),
    lines.join('\n'),
  );
  for (const value of [badShared, badKey, 'also-not-pem', CLIENT_SECRET, SHARED_SECRET]) {
    assert.ok(
      !lines.some((line) => line.includes(value)),
      `a problem echoes a Secret value:\n${lines.join('\n')}`,
    );
  }
});

test('TLS Secrets become the listener certificates; a mismatched pair names its Secret', () => {
  const good = generateTestCertificate('app.example.com');
  const other = generateTestCertificate('other.example.com');
  const store = {
    ...STORE,
    'portcullis/tls': { 'tls.crt': good.certPem, 'tls.key': good.keyPem },
    'edge/mixed': { 'tls.crt': good.certPem, 'tls.key': other.keyPem },
  };
  const ok = check(spec({ insecureServer: false, certificates: [{ name: 'tls' }] }), store);
  assert.deepEqual(ok.lines, []);
  assert.equal(ok.parsed.config?.certificates.length, 1);
  const bad = check(
    spec({ insecureServer: false, certificates: [{ name: 'tls' }, { name: 'mixed', namespace: 'edge' }] }),
    store,
  );
  const line = bad.lines.find((text) => text.startsWith('spec.certificates[1]: '));
  assert.ok(line?.endsWith('(key tls.key of Secret edge/mixed)'), bad.lines.join('\n'));
});

test('request params from a Secret: a flow parameter names the Secret, a duplicate is refused', () => {
  const store = { ...STORE, 'portcullis/idp-params': { client_id: 'x', prompt: 'consent' } };
  const { lines } = check(spec(), store);
  assert.ok(
    lines.includes(
      'spec.identityProvider.requestParamsSecret: key prompt of Secret portcullis/idp-params is also set inline; keep one',
    ),
    lines.join('\n'),
  );
  const flow = lines.find((line) =>
    line.startsWith('spec.identityProvider.requestParamsSecret: is set by the sign-in flow'),
  );
  assert.ok(flow?.endsWith('(key client_id of Secret portcullis/idp-params)'), lines.join('\n'));
  assert.match(flow ?? '', /spec\.identityProvider\.secret \(key client_id\)/, 'the message names fields');
});

test('a spec that is not a map, and a group that is not a map, are problems not crashes', () => {
  assert.deepEqual(check('text').lines.slice(0, 1), ['spec: must be a map of settings']);
  const { lines } = check(spec({ cookie: 'x' }));
  assert.ok(
    lines.some((line) => line.startsWith('spec.cookie: must be a map of name, domain')),
    lines.join('\n'),
  );
});

const CORP_SECRET = `corp-secret-${randomBytes(8).toString('hex')}`;
const PARTNER_SECRET = `partner-secret-${randomBytes(8).toString('hex')}`;
const PROVIDERS_STORE = {
  ...STORE,
  'portcullis/corp-idp': { client_id: 'corp-client', client_secret: `${CORP_SECRET}\n` },
  'partners/partner-idp': { client_id: 'partner-client', client_secret: PARTNER_SECRET },
  'portcullis/partner-params': { login_hint: 'guest@partner.example' },
};

/** Two named providers beside the global one; `change` replaces fields of either. */
function twoProviders(change: { corp?: object; partner?: object } = {}): Record<string, unknown> {
  return spec({
    identityProviders: {
      corp: {
        provider: 'okta',
        url: 'https://corp.okta.example.com',
        secret: { name: 'corp-idp' },
        scopes: ['openid', 'email'],
        trustUnverifiedEmail: true,
        ...change.corp,
      },
      partner: {
        url: 'https://login.partner.example/realms/p',
        secret: { name: 'partner-idp', namespace: 'partners' },
        requestParams: { prompt: 'login' },
        requestParamsSecret: { name: 'partner-params' },
        ...change.partner,
      },
    },
  });
}

test('identityProviders: two providers and their Secrets become identity_providers, Secrets followed', () => {
  const { settings, parsed, lines } = check(twoProviders(), PROVIDERS_STORE);
  assert.deepEqual(lines, []);
  assert.deepEqual(settings.document.identity_providers, {
    corp: {
      provider: 'okta',
      provider_url: 'https://corp.okta.example.com',
      client_id: 'corp-client',
      client_secret: CORP_SECRET,
      scopes: ['openid', 'email'],
      trust_unverified_email: true,
    },
    partner: {
      provider_url: 'https://login.partner.example/realms/p',
      client_id: 'partner-client',
      client_secret: PARTNER_SECRET,
      request_params: { prompt: 'login', login_hint: 'guest@partner.example' },
    },
  });
  const names = settings.secrets.map(({ namespace, name }) => `${namespace}/${name}`);
  for (const name of ['portcullis/corp-idp', 'partners/partner-idp', 'portcullis/partner-params'])
    assert.ok(names.includes(name), `${name} is followed: ${names.join(', ')}`);
  const providers = parsed.config?.identity_providers;
  assert.equal(providers?.corp?.provider, 'okta');
  assert.equal(providers?.corp?.client_secret.reveal(), CORP_SECRET);
  assert.equal(providers?.partner?.provider, 'oidc');
  assert.equal(providers?.partner?.client_id, 'partner-client');
  assert.equal(parsed.config?.idp_client_id, 'portcullis', 'the global provider is unchanged');
});

test('identityProviders: a missing Secret, key or field, and bad values, name spec.identityProviders.<name>.<field>', () => {
  const missingSecret = check(twoProviders({ partner: { secret: { name: 'gone' } } }), PROVIDERS_STORE);
  assert.deepEqual(missingSecret.lines, [
    'spec.identityProviders.partner.secret: Secret portcullis/gone not found',
  ]);
  assert.ok(
    missingSecret.settings.secrets.some(({ name }) => name === 'gone'),
    'a missing Secret is still followed, so creating it is noticed',
  );

  const store = { ...PROVIDERS_STORE, 'portcullis/corp-idp': { client_id: 'corp-client' } };
  assert.deepEqual(check(twoProviders(), store).lines, [
    'spec.identityProviders.corp.secret: Secret portcullis/corp-idp has no key client_secret',
  ]);

  const noSecretField = check(
    spec({
      identityProviders: {
        corp: { provider: 'okta', url: 'https://corp.okta.example.com' },
      },
    }),
    PROVIDERS_STORE,
  );
  assert.deepEqual(noSecretField.lines, [
    "spec.identityProviders.corp.secret: is required: the Secret with this provider's client_id and client_secret",
  ]);

  const bad = check(
    twoProviders({
      corp: { provider: 'oktaa', url: undefined, scopes: [42] },
      partner: { url: 'ftp://x', requestParams: { scope: 'x' }, trustUnverifiedEmail: 'yes' },
    }),
    PROVIDERS_STORE,
  );
  const at = (field: string) => bad.lines.filter((line) => line.startsWith(`${field}: `));
  assert.match(
    at('spec.identityProviders.corp.provider')[0] ?? '',
    /"oktaa" is not one of .*did you mean okta/,
  );
  assert.equal(at('spec.identityProviders.corp.scopes').length, 1, bad.lines.join('\n'));
  assert.equal(at('spec.identityProviders.partner.url').length, 1, bad.lines.join('\n'));
  assert.equal(at('spec.identityProviders.partner.trustUnverifiedEmail').length, 1, bad.lines.join('\n'));
  assert.match(
    at('spec.identityProviders.partner.requestParams.scope')[0] ?? '',
    /use spec\.identityProviders\.partner\.scopes for the scopes/,
    'entry keys in messages are fields too',
  );
  assert.ok(
    bad.lines.every((line) => line.startsWith('spec.identityProviders.')),
    `every problem names a provider field:\n${bad.lines.join('\n')}`,
  );
  assert.ok(!bad.lines.some((line) => /identity_providers|provider_url|client_secret_file/.test(line)));

  const noUrl = check(twoProviders({ partner: { url: undefined } }), PROVIDERS_STORE);
  assert.deepEqual(noUrl.lines, [
    'spec.identityProviders.partner.url: is required (or provider): a named provider is complete on its own',
  ]);
});

test('identityProviders: a duplicate request param names the Secret; unknown fields and bad shapes are problems', () => {
  const store = { ...PROVIDERS_STORE, 'portcullis/partner-params': { prompt: 'consent', client_id: 'x' } };
  const { lines } = check(twoProviders(), store);
  assert.ok(
    lines.includes(
      'spec.identityProviders.partner.requestParamsSecret: key prompt of Secret portcullis/partner-params is also set inline; keep one',
    ),
    lines.join('\n'),
  );
  const flow = lines.find((line) =>
    line.startsWith('spec.identityProviders.partner.requestParamsSecret: is set by the sign-in flow'),
  );
  assert.ok(flow?.endsWith('(key client_id of Secret portcullis/partner-params)'), lines.join('\n'));

  const shapes = check(
    spec({
      identityProviders: {
        corp: { ...(twoProviders().identityProviders as { corp: object }).corp, scops: ['x'] },
        other: 'text',
        inline: { provider: 'google', secret: CORP_SECRET },
      },
    }),
    PROVIDERS_STORE,
  );
  assert.ok(
    shapes.lines.includes('spec.identityProviders.corp.scops: unknown field (did you mean scopes?)'),
    shapes.lines.join('\n'),
  );
  assert.ok(
    shapes.lines.some((line) => line.startsWith('spec.identityProviders.other: must be a map of provider')),
    shapes.lines.join('\n'),
  );
  assert.ok(
    shapes.lines.includes(
      'spec.identityProviders.inline.secret: must name a Secret as {name, namespace}; secret values are never written in the Portcullis object',
    ),
    shapes.lines.join('\n'),
  );
  assert.deepEqual(check(spec({ identityProviders: ['corp'] })).lines, [
    'spec.identityProviders: must be a map of provider name to its settings',
  ]);
});

test('identityProviders: the name default is refused, at its field, naming the identityProvider fields', () => {
  const corp = (twoProviders().identityProviders as { corp: object }).corp;
  const { lines } = check(spec({ identityProviders: { default: corp, Bad: corp } }), PROVIDERS_STORE);
  const reserved = lines.find((line) => line.startsWith('spec.identityProviders.default: is reserved'));
  assert.ok(reserved, lines.join('\n'));
  assert.match(reserved, /spec\.identityProvider\.provider, spec\.identityProvider\.url/);
  assert.ok(
    lines.some((line) => line.startsWith('spec.identityProviders.Bad: "Bad" is not a provider name')),
    lines.join('\n'),
  );
});

test('identityProviders: Secret values never appear in a problem', () => {
  const badId = `bad id ${randomBytes(6).toString('hex')}`;
  const store = {
    ...PROVIDERS_STORE,
    'portcullis/corp-idp': { client_id: ` `, client_secret: CORP_SECRET },
    'partners/partner-idp': { client_id: badId, client_secret: PARTNER_SECRET },
    'portcullis/partner-params': { redirect_uri: PARTNER_SECRET },
  };
  const { lines } = check(twoProviders({ corp: { url: 'not a url' } }), store);
  assert.ok(lines.length >= 2, lines.join('\n'));
  assert.ok(
    lines.includes(
      'spec.identityProviders.corp.secret: key client_id of Secret portcullis/corp-idp is empty',
    ),
    lines.join('\n'),
  );
  for (const value of [CORP_SECRET, PARTNER_SECRET, CLIENT_SECRET, SHARED_SECRET])
    assert.ok(
      !lines.some((line) => line.includes(value)),
      `a problem echoes a Secret value:\n${lines.join('\n')}`,
    );
});

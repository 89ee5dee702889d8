// Map keys from user input named `__proto__` or `constructor` (valid keys in the CRD's
// spec.identityProviders, in a Secret's data, in a map of request parameters or headers) are kept
// or refused with a message naming them, never silently dropped: `obj[key] = value` with key
// `__proto__` sets the prototype instead of adding an entry. The API server's JSON decoding, like
// JSON.parse and the YAML parser, gives `__proto__` as an own key; each test input is made that way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { parseConfig } from '../../../src/config/parse-config.js';
import { formatProblem } from '../../../src/shared/errors.js';
import { secretData, type SecretObject } from '../../../src/kubernetes/cluster-state.js';
import type { ReadSecret } from '../../../src/kubernetes/secret-refs.js';
import { refuseFileRead, settingsDocument } from '../../../src/kubernetes/settings-document.js';

const b64 = (text: string): string => Buffer.from(text).toString('base64');

/** Secrets as the API server returns them (base64 data), decoded the way the watcher does. */
function store(objects: Record<string, Record<string, string>>): ReadSecret {
  return ({ namespace, name }) => {
    const data = objects[`${namespace}/${name}`];
    if (data === undefined) return undefined;
    const secret: SecretObject = {
      metadata: { name, namespace },
      data: JSON.parse(
        JSON.stringify(Object.fromEntries(Object.entries(data).map(([key, text]) => [key, b64(text)]))),
      ) as Record<string, string>,
    };
    return secretData(secret);
  };
}

const SECRETS = store({
  'portcullis/core': {
    shared_secret: Buffer.alloc(32, 1).toString('base64'),
    cookie_secret: Buffer.alloc(32, 2).toString('base64'),
  },
  'portcullis/idp': { client_id: 'portcullis', client_secret: 'global-secret' },
  'portcullis/corp-idp': { client_id: 'corp-client', client_secret: 'corp-secret' },
  // A Secret key `__proto__` is valid in Kubernetes ([-._a-zA-Z0-9]+).
  'portcullis/params': { ['__proto__']: 'from-secret', login_hint: 'someone@example.com' },
});

/** A spec (parsed from JSON, so `__proto__` is an own key) with `identityProviders` as given. */
function specWith(identityProviders: string): unknown {
  return JSON.parse(`{
    "insecureServer": true,
    "authenticate": { "url": "https://authenticate.example.com" },
    "secrets": { "name": "core" },
    "identityProvider": {
      "url": "https://idp.example.com/realms/main",
      "secret": { "name": "idp" },
      "requestParams": { "constructor": "inline" },
      "requestParamsSecret": { "name": "params" }
    },
    "identityProviders": ${identityProviders}
  }`);
}

const PROVIDER =
  '{ "provider": "okta", "url": "https://corp.okta.example.com", "secret": { "name": "corp-idp" } }';

function check(objectSpec: unknown) {
  const settings = settingsDocument({ spec: objectSpec, namespace: 'portcullis', readSecret: SECRETS });
  const parsed = parseConfig({ document: settings.document, env: {}, readText: refuseFileRead });
  const lines = [...settings.problems, ...settings.fieldProblems(parsed.problems)].map(formatProblem);
  return { settings, parsed, lines };
}

test('a provider named constructor is kept; one named __proto__ is refused, naming the field', () => {
  const { settings, lines } = check(specWith(`{ "constructor": ${PROVIDER}, "__proto__": ${PROVIDER} }`));
  const providers = settings.document['identity_providers'] as Record<string, unknown>;
  assert.ok(Object.hasOwn(providers, '__proto__'), 'the __proto__ entry reaches validate');
  assert.equal(Object.getPrototypeOf(providers), Object.prototype, 'and is not the prototype');
  assert.deepEqual(
    lines.filter((line) => line.includes('__proto__')),
    [
      'spec.identityProviders.__proto__: "__proto__" is not a provider name: use a lower-case letter, then up to 62 lower-case letters, digits, "-" or "_"',
    ],
  );
  assert.equal(lines.length, 1, lines.join('\n'));
});

test('constructor alone is a valid provider name and serves; a Secret key and a map key __proto__ are kept', () => {
  const { parsed, lines, settings } = check(specWith(`{ "constructor": ${PROVIDER} }`));
  assert.deepEqual(lines, []);
  const config = parsed.config;
  assert.ok(config);
  assert.ok(Object.hasOwn(config.identity_providers ?? {}, 'constructor'));
  assert.equal(config.identity_providers?.['constructor']?.client_id, 'corp-client');
  // `__proto__` from the params Secret, `constructor` inline: both request parameters.
  const params = settings.document['idp_request_params'] as Record<string, unknown>;
  assert.ok(Object.hasOwn(params, '__proto__'));
  assert.deepEqual(Object.entries(params).sort(), [
    ['__proto__', 'from-secret'],
    ['constructor', 'inline'],
    ['login_hint', 'someone@example.com'],
  ]);
  assert.deepEqual(Object.entries(config.idp_request_params).sort(), Object.entries(params).sort());
});

test('from a file (YAML or JSON), a provider named __proto__ is refused with a message, not dropped', () => {
  const provider = {
    provider_url: 'https://corp.okta.example.com',
    client_id: 'corp-client',
    client_secret: 'corp-secret',
  };
  const base = {
    insecure_server: true,
    authenticate_service_url: 'https://authenticate.example.com',
    shared_secret: Buffer.alloc(32, 1).toString('base64'),
    cookie_secret: Buffer.alloc(32, 2).toString('base64'),
  };
  const yaml = parseYaml(
    `identity_providers:\n  __proto__:\n    provider_url: ${provider.provider_url}\n    client_id: c\n    client_secret: s\n`,
  ) as Record<string, unknown>;
  const json = JSON.parse(`{"identity_providers": {"__proto__": ${JSON.stringify(provider)}}}`) as Record<
    string,
    unknown
  >;
  for (const [what, document] of [
    ['yaml', yaml],
    ['json', json],
  ] as const) {
    assert.ok(Object.hasOwn(document['identity_providers'] as object, '__proto__'), `${what}: an own key`);
    const parsed = parseConfig({ document: { ...base, ...document }, env: {}, readText: refuseFileRead });
    assert.equal(parsed.config, undefined, what);
    assert.ok(
      parsed.problems.some(
        (problem) =>
          problem.path === 'identity_providers.__proto__' && /is not a provider name/.test(problem.message),
      ),
      `${what}: ${parsed.problems.map(formatProblem).join('; ')}`,
    );
  }
});

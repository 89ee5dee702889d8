// Issue 23 item 5: a config that would open access, or that Envoy would refuse, is refused by
// parsing (and so by `validate`), each with a message naming the key.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfigFile } from '../../../src/config/load-file.js';
import { formatProblem } from '../../../src/shared/errors.js';
import { generateTestCertificate } from '../../support/test-certs.js';
import { assertProblem, b64, base, CERT_PEM, KEY_PEM, parse, problems, valid } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'portcullis-refused-'));
const other = generateTestCertificate('other.test');

/** Loads `text` as a config file of `extension`, through the real format parsers. */
function load(
  name: string,
  text: string,
  env: Record<string, string> = {},
): ReturnType<typeof loadConfigFile> {
  const path = join(dir, name);
  writeFileSync(path, text);
  return loadConfigFile(path, env);
}

function loadProblems(name: string, text: string, env: Record<string, string> = {}): string[] {
  const result = load(name, text, env);
  assert.equal(result.config, undefined, 'expected problems');
  return result.problems.map(formatProblem);
}

const HEAD = 'insecure_server: true\naddress: ":8080"\n';
const route = (extra: Record<string, unknown>): Record<string, unknown> =>
  base({ routes: [{ from: 'https://app.example.com', to: 'http://10.0.0.1:8080', ...extra }] });

// 1. A public route is never checked: anything that restricts or grants on it is an error.

test('a public route with a deny policy is an error naming both keys', () => {
  const list = problems(
    route({
      allow_public_unauthenticated_access: true,
      policy: [{ deny: { or: [{ http_path: { starts_with: '/admin' } }] } }],
    }),
  );
  assertProblem(
    list,
    'routes[0].allow_public_unauthenticated_access',
    'cannot be combined with policy: a public route admits everyone and is never checked',
  );
  assert.ok(list[0]?.includes('remove allow_public_unauthenticated_access or policy'), list[0]);
});

test('a public route with an allow policy or any access shortcut is an error naming both keys', () => {
  const cases: Record<string, unknown>[] = [
    { policy: { allow: { or: [{ email: 'a@example.com' }] } } },
    { allowed_users: ['a@example.com'] },
    { allowed_domains: ['example.com'] },
    { allowed_idp_claims: { groups: ['admins'] } },
    { allow_any_authenticated_user: true },
  ];
  for (const extra of cases) {
    const key = Object.keys(extra)[0] as string;
    assertProblem(
      problems(route({ allow_public_unauthenticated_access: true, ...extra })),
      'routes[0].allow_public_unauthenticated_access',
      `cannot be combined with ${key}:`,
    );
  }
  assertProblem(
    problems(route({ allow_public_unauthenticated_access: true, allowed_users: ['a'], policy: [] })),
    'routes[0].allow_public_unauthenticated_access',
    'cannot be combined with allowed_users:',
  );
});

test('keys that say nothing (false, empty lists) are allowed on a public route', () => {
  const config = valid(
    route({
      allow_public_unauthenticated_access: true,
      allow_any_authenticated_user: false,
      allowed_users: [],
      policy: [],
    }),
  );
  assert.equal(config.routes[0]?.allow_public_unauthenticated_access, true);
});

// 2. Unknown keys are errors with a did-you-mean hint; removed ones keep their own message.

test('an unknown route key is an error with a did-you-mean hint, not a warning', () => {
  const result = load(
    'route-key.yaml',
    `${HEAD}routes:\n  - from: https://app.example.com\n    to: http://10.0.0.1\n    allowed_user: [a@example.com]\n`,
  );
  assert.equal(result.config, undefined);
  assert.deepEqual(result.problems.map(formatProblem), [
    'routes[0].allowed_user: unknown route option (did you mean allowed_users?) (line 6)',
  ]);
  assertProblem(problems(route({ zzzz_qqqq: 1 })), 'routes[0].zzzz_qqqq', 'unknown route option; remove it');
});

test('an unknown top-level key is an error with a did-you-mean hint', () => {
  assertProblem(
    loadProblems('top.yaml', `${HEAD}cookie_secur: true\n`),
    'cookie_secur',
    'unknown option (did you mean',
  );
  assertProblem(problems(base({ insecure_sever: true })), 'insecure_sever', 'did you mean insecure_server?');
});

test('peer options whose absence would open access are errors; the others still warn', () => {
  assertProblem(
    problems(base({ downstream_mtls: { ca: 'x' } })),
    'downstream_mtls',
    'ignoring it would open access: client certificates would be neither required nor checked',
  );
  for (const key of ['otel_traces_exporter', 'autocert']) {
    const result = parse(base({ [key]: 'x' }));
    assert.ok(result.config, key);
    assert.deepEqual(result.warnings.map(formatProblem), [`${key}: is not supported by Portcullis; ignored`]);
  }
  // metrics_basic_auth was refused while metrics could not be protected; issue 26 implements it.
  assert.equal(valid(base({ metrics_basic_auth: 'YTpi' })).metrics_basic_auth?.reveal(), 'a:b');
});

test('a misspelt policy action, operator or criterion is an error; nothing is dropped silently', () => {
  const policy = (rule: unknown): string[] => problems(route({ policy: [rule] }));
  assertProblem(
    policy({ deny_user: { or: [{ email: 'a@example.com' }] } }),
    'routes[0].policy[0].deny_user',
    'unknown policy action: deny_user; use allow or deny',
  );
  assertProblem(
    policy({ deni: { or: [{ email: 'a@example.com' }] } }),
    'routes[0].policy[0].deni',
    '(did you mean deny?)',
  );
  assertProblem(
    policy({ deny: { or: [{ user_email: 'a@example.com' }] } }),
    'routes[0].policy[0].deny.or[0]',
    'unknown policy criterion: user_email',
  );
  assertProblem(
    policy({ deny: { ors: [{ email: 'a@example.com' }] } }),
    'routes[0].policy[0].deny.ors',
    'did you mean or?',
  );
});

test('an `action` inside a rule must agree with the rule it is under', () => {
  assertProblem(
    problems(route({ policy: [{ allow: { action: 'deny', or: [{ email: 'a@example.com' }] } }] })),
    'routes[0].policy[0].allow.action',
    'must be allow, the action this rule is under',
  );
  valid(route({ policy: [{ deny: { action: 'deny', or: [{ email: 'a@example.com' }] } }] }));
});

test('a flag criterion with a value that reads as "no" is an error, not a criterion that holds', () => {
  for (const value of ['no', 'false', 0, 'off']) {
    assertProblem(
      problems(route({ policy: [{ allow: { or: [{ accept: value }] } }] })),
      'routes[0].policy[0].allow.or[0].accept',
      'takes no value; write accept: true',
    );
  }
  valid(
    route({ policy: [{ allow: { or: [{ accept: true }, { authenticated_user: null }, { reject: {} }] } }] }),
  );
});

test('removed options keep their "removed, use X" errors', () => {
  assertProblem(problems(base({ headers: { a: 'b' } })), 'headers', 'use set_response_headers');
  assertProblem(problems(route({ allowed_groups: ['admins'] })), 'routes[0].allowed_groups', 'claim/groups');
});

// 3. YAML 1.1 coercions are type errors in typed documents; text sources still convert.

test('yes, no, on, off, y, n and a quoted "true" for a boolean are type errors naming the key', () => {
  for (const word of ['yes', 'no', 'on', 'off', 'y', 'n', '"true"', "'false'"]) {
    const list = loadProblems('bool.yaml', `address: ":8080"\ninsecure_server: ${word}\n`);
    assertProblem(list, 'insecure_server', 'expected a boolean (true or false), got "');
    assertProblem(list, 'insecure_server', 'write true or false, without quotes');
    const routeList = loadProblems(
      'route-bool.yaml',
      `${HEAD}routes:\n  - from: https://a.example.com\n    to: http://10.0.0.1\n    allow_websockets: ${word}\n`,
    );
    assertProblem(routeList, 'routes[0].allow_websockets', 'expected a boolean (true or false)');
  }
  assertProblem(
    loadProblems('bool.json', '{"address": ":8080", "insecure_server": "true"}'),
    'insecure_server',
    'expected a boolean',
  );
  assertProblem(
    loadProblems('bool.toml', 'address = ":8080"\ninsecure_server = "yes"\n'),
    'insecure_server',
    'expected a boolean',
  );
});

test('a number where a string is expected is a type error: 1.10 would be read as 1.1', () => {
  const list = loadProblems(
    'string.yaml',
    `${HEAD}cookie_name: 1.10\nroutes:\n  - from: https://a.example.com\n    to: http://10.0.0.1\n    prefix_rewrite: 1.10\n`,
  );
  assertProblem(list, 'cookie_name', 'expected a string, got the number 1.1; put it in quotes');
  assertProblem(list, 'routes[0].prefix_rewrite', 'expected a string, got the number 1.1');
  assert.equal(load('quoted.yaml', `${HEAD}cookie_name: "1.10"\n`).config?.cookie_name, '1.10');
  assertProblem(problems(base({ shared_secret: 12345 })), 'shared_secret', 'put it in quotes');
});

test('a quoted number for a number option is a type error in a typed document', () => {
  assertProblem(
    loadProblems('int.yaml', `${HEAD}xff_num_trusted_hops: "2"\n`),
    'xff_num_trusted_hops',
    'expected a whole number, got "2"; write the number without quotes',
  );
});

test('environment variables and properties files are text: true, false and numbers still convert', () => {
  const fromEnv = valid(base({ insecure_server: undefined }), {
    INSECURE_SERVER: 'true',
    XFF_NUM_TRUSTED_HOPS: '2',
    TRACING_SAMPLING_RATE: '0.5',
  });
  assert.equal(fromEnv.insecure_server, true);
  assert.equal(fromEnv.xff_num_trusted_hops, 2);
  assert.equal(fromEnv.tracing_sampling_rate, 0.5);
  const props = load(
    'text.properties',
    'insecure_server=true\naddress=:8080\nxff_num_trusted_hops=3\ncookie_http_only=false\ncookie_name=1.10\n',
  );
  assert.deepEqual(props.problems, []);
  assert.equal(props.config?.insecure_server, true);
  assert.equal(props.config?.xff_num_trusted_hops, 3);
  assert.equal(props.config?.cookie_http_only, false);
  assert.equal(props.config?.cookie_name, '1.10');
  // Text follows Go's ParseBool, as the peer does: `yes` is not a boolean there either.
  assertProblem(problems(base(), { COOKIE_HTTP_ONLY: 'yes' }), 'COOKIE_HTTP_ONLY', 'expected a boolean');
  assertProblem(
    loadProblems('yes.properties', 'insecure_server=on\n'),
    'insecure_server',
    'expected a boolean',
  );
});

// 4. What Envoy would NACK is refused first, at its key.

test('durations past what Envoy accepts, or negative, are errors naming the key', () => {
  assertProblem(
    problems(route({ timeout: '2562047h47m17s' })),
    'routes[0].timeout',
    'is longer than Envoy accepts; the most is 2562047h47m16s',
  );
  assertProblem(
    problems(base({ timeout_idle: '87660000000h' })),
    'timeout_idle',
    'longer than Envoy accepts',
  );
  assertProblem(
    problems(route({ idle_timeout: `${'9'.repeat(400)}h` })),
    'routes[0].idle_timeout',
    'longer than Envoy accepts',
  );
  assertProblem(problems(route({ timeout: '-1s' })), 'routes[0].timeout', 'must be zero or more');
  assert.equal(valid(route({ timeout: '2562047h47m16s' })).routes[0]?.timeout_ms, 9_223_372_036_000);
});

test('a listener certificate or key that does not parse is an error at its key', () => {
  const garbage = '-----BEGIN CERTIFICATE-----\nTk9UIEEgQ0VSVElGSUNBVEU=\n-----END CERTIFICATE-----\n';
  const badKey = '-----BEGIN PRIVATE KEY-----\nTk9UIEEgS0VZ\n-----END PRIVATE KEY-----\n';
  const tls = { insecure_server: undefined };
  const list = problems(base({ ...tls, certificate: garbage, certificate_key: KEY_PEM }));
  assertProblem(list, 'certificate', 'its certificate does not parse as X.509');
  assert.ok(!list.some((line) => line.includes('no TLS certificate is configured')), list.join('\n'));
  assertProblem(
    problems(base({ ...tls, certificate: CERT_PEM, certificate_key: badKey })),
    'certificate_key',
    'does not parse as a private key',
  );
  assertProblem(
    problems(base({ ...tls, certificate: `${CERT_PEM}${garbage}`, certificate_key: KEY_PEM })),
    'certificate',
    'certificate 2 of 2 does not parse',
  );
  assertProblem(
    problems(base({ ...tls, certificates: [{ cert: b64(garbage), key: KEY_PEM }] })),
    'certificates[0].cert',
    'does not parse as X.509',
  );
  assertProblem(
    problems(base({ certificate_authority: garbage })),
    'certificate_authority',
    'does not parse as X.509',
  );
});

test("a key that is not its certificate's is an error naming both", () => {
  const tls = { insecure_server: undefined };
  assertProblem(
    problems(base({ ...tls, certificate: CERT_PEM, certificate_key: other.keyPem })),
    'certificate_key',
    'is not the private key of the certificate in certificate',
  );
  assertProblem(
    problems(
      base({ ...tls, certificate_file: '/c.pem', certificate_key_file: '/k.pem' }),
      {},
      {
        '/c.pem': CERT_PEM,
        '/k.pem': other.keyPem,
      },
    ),
    'certificate_key_file',
    'is not the private key of the certificate in certificate_file',
  );
  assertProblem(
    problems(base({ ...tls, certificates: [{ cert: CERT_PEM, key: other.keyPem }] })),
    'certificates[0].key',
    'is not the private key of the certificate in certificates[0].cert',
  );
  valid(base({ ...tls, certificate: CERT_PEM, certificate_key: KEY_PEM }));
});

test('upstream client certificates and custom CAs are parsed, and the client key must match', () => {
  assertProblem(
    problems(
      route({ to: 'https://10.0.0.1', tls_client_cert: b64(CERT_PEM), tls_client_key: b64(other.keyPem) }),
    ),
    'routes[0].tls_client_key',
    'is not the private key of the certificate in tls_client_cert',
  );
  assertProblem(
    problems(
      route({ to: 'https://10.0.0.1', tls_client_cert_file: '/c.pem', tls_client_key_file: '/k.pem' }),
      {},
      { '/c.pem': other.certPem, '/k.pem': KEY_PEM },
    ),
    'routes[0].tls_client_key_file',
    'is not the private key of the certificate in tls_client_cert_file',
  );
  assertProblem(
    problems(
      route({
        to: 'https://10.0.0.1',
        tls_custom_ca: b64('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'),
      }),
    ),
    'routes[0].tls_custom_ca',
    'does not parse as X.509',
  );
  assertProblem(
    problems(
      route({
        to: 'https://10.0.0.1',
        tls_client_cert: b64(CERT_PEM),
        tls_client_key: b64('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'),
      }),
    ),
    'routes[0].tls_client_key',
    'does not parse as a private key',
  );
  const config = valid(
    route({
      to: 'https://10.0.0.1',
      tls_custom_ca: b64(`${CERT_PEM}${other.certPem}`),
      tls_client_cert: b64(CERT_PEM),
      tls_client_key: b64(KEY_PEM),
    }),
  );
  assert.equal(config.routes[0]?.tls_client_key_pem, KEY_PEM);
});

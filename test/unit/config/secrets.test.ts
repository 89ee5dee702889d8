// Secrets: formats, files (trailing newline trimmed, unreadable, empty), signing keys, and the
// guarantee that no secret value ever appears in a message or a logged Config.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { inspect } from 'node:util';
import { Secret } from '../../../src/shared/secret.js';
import { GLOBAL_OPTIONS } from '../../../src/config/option-table.js';
import {
  assertProblem,
  b64,
  base,
  EC_KEY_PEM,
  parse,
  problems,
  RSA_KEY_PEM,
  SECRET_32,
  valid,
} from './helpers.js';

const MARKER = 'S3CRET-MARKER-d41d8cd98f00';

test('shared_secret and cookie_secret must be base64 of exactly 32 bytes', () => {
  for (const key of ['shared_secret', 'cookie_secret']) {
    assert.equal(
      valid(base({ [key]: SECRET_32 }))[key === 'shared_secret' ? 'shared_secret' : 'cookie_secret']?.reveal()
        .length,
      32,
    );
    assertProblem(
      problems(base({ [key]: b64('too short') })),
      key,
      'must be base64 of 32 bytes, got 9 bytes',
    );
    assertProblem(problems(base({ [key]: 'not base64 at all!' })), key, 'contains whitespace');
    assertProblem(problems(base({ [key]: 'not*base64' })), key, 'is not base64');
    assertProblem(problems(base({ [key]: '' })), key, 'is empty');
  }
  const urlSafe = Buffer.alloc(32, 0xfb).toString('base64url');
  assert.equal(valid(base({ shared_secret: urlSafe })).shared_secret?.reveal().length, 32);
});

test('secret files: trailing newline and surrounding spaces are trimmed', () => {
  const files = { '/run/secrets/shared': `${SECRET_32}\n`, '/run/secrets/cookie': `\n  ${SECRET_32}  \r\n` };
  const config = valid(
    base({ shared_secret_file: '/run/secrets/shared', cookie_secret_file: '/run/secrets/cookie' }),
    {},
    files,
  );
  assert.equal(config.shared_secret?.reveal().toString('base64'), SECRET_32);
  assert.equal(config.cookie_secret?.reveal().toString('base64'), SECRET_32);
});

test('secret files: unreadable, empty, or both forms set each give one clear error naming the key', () => {
  assertProblem(
    problems(base({ shared_secret_file: '/missing' })),
    'shared_secret_file',
    'cannot read /missing: ENOENT (no such file)',
  );
  assertProblem(
    problems(base({ shared_secret_file: '/empty' }), {}, { '/empty': '\n\n' }),
    'shared_secret_file',
    '/empty is empty',
  );
  assertProblem(problems(base({ shared_secret_file: '' })), 'shared_secret_file', 'is empty');
  const both = problems(
    base({ shared_secret: SECRET_32, shared_secret_file: '/s' }),
    {},
    { '/s': SECRET_32 },
  );
  assertProblem(both, 'shared_secret_file', 'set only one of shared_secret and shared_secret_file');
  assert.equal(both.length, 1, 'one problem, not a cascade');
  // In split mode the unreadable file is the one problem, not also "shared_secret is required".
  const unreadableInSplitMode = problems(
    base({
      services: 'authorize',
      databroker_service_url: 'http://127.0.0.1:5443',
      shared_secret_file: '/missing',
    }),
  );
  assert.deepEqual(
    unreadableInSplitMode.map((line) => line.replace(/;.*/, '')),
    ['shared_secret_file: cannot read /missing: ENOENT (no such file)'],
  );
});

test('a secret file with the wrong content names the _file key', () => {
  assertProblem(
    problems(base({ cookie_secret_file: '/c' }), {}, { '/c': 'short\n' }),
    'cookie_secret_file',
    'must be base64 of 32 bytes',
  );
});

test('signing_key: ECDSA and RSA keys, raw or base64 PEM; the algorithm follows the key', () => {
  assert.equal(valid(base({ signing_key: EC_KEY_PEM })).signing_key?.algorithm, 'ES256');
  assert.equal(valid(base({ signing_key: b64(EC_KEY_PEM) })).signing_key?.algorithm, 'ES256');
  assert.equal(valid(base({ signing_key: RSA_KEY_PEM })).signing_key?.algorithm, 'RS256');
  const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' })
    .privateKey.export({ type: 'sec1', format: 'pem' })
    .toString();
  assert.equal(valid(base({ signing_key: p384 })).signing_key?.algorithm, 'ES384');
  const twoKeys = valid(base({ signing_key: `${EC_KEY_PEM}${RSA_KEY_PEM}` })).signing_key;
  assert.equal(twoKeys?.algorithm, 'ES256', 'the first key signs');
});

test('signing_key: Ed25519 is rejected with a message saying so; other bad keys are errors too', () => {
  const ed25519 = generateKeyPairSync('ed25519')
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  assertProblem(
    problems(base({ signing_key: ed25519 })),
    'signing_key',
    'is an Ed25519 key, which is not supported for signing; use an ECDSA (P-256) or RSA key',
  );
  const small = generateKeyPairSync('rsa', { modulusLength: 1024 })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  assertProblem(problems(base({ signing_key: small })), 'signing_key', 'is a 1024-bit RSA key');
  const publicKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .publicKey.export({ type: 'spki', format: 'pem' })
    .toString();
  assertProblem(problems(base({ signing_key: publicKey })), 'signing_key', 'give the private key');
  assertProblem(problems(base({ signing_key: 'garbage' })), 'signing_key', 'does not hold a PEM private key');
  assertProblem(
    problems(base({ signing_key_file: '/k' }), {}, { '/k': ed25519 }),
    'signing_key_file',
    'Ed25519',
  );
});

test('databroker storage: memory or redis; redis needs a redis:// URL; the URL is never echoed', () => {
  assertProblem(
    problems(base({ databroker_storage_type: 'postgres' })),
    'databroker_storage_type',
    'is not one of memory, redis',
  );
  assertProblem(
    problems(base({ databroker_storage_type: 'redis' })),
    'databroker_storage_connection_string',
    'is required with databroker_storage_type: redis',
  );
  const bad = problems(
    base({
      databroker_storage_type: 'redis',
      databroker_storage_connection_string: `http://user:${MARKER}@host`,
    }),
  );
  assertProblem(bad, 'databroker_storage_connection_string', 'unknown scheme http:');
  assert.ok(!bad.join('\n').includes(MARKER));
  const ignored = parse(base({ databroker_storage_connection_string: 'redis://x:6379' }));
  assert.ok(
    ignored.warnings.some((warning) => /is ignored: databroker_storage_type is memory/.test(warning.message)),
  );
});

test('no message ever contains a secret value, whatever is wrong with it', () => {
  const secretKeys = GLOBAL_OPTIONS.filter((option) => option.secret).map((option) => option.key);
  const shapes: unknown[] = [
    MARKER,
    ` ${MARKER} x`,
    [MARKER],
    { a: MARKER },
    `-----BEGIN PRIVATE KEY-----\n${MARKER}\n-----END PRIVATE KEY-----`,
  ];
  for (const shape of shapes) {
    const document = base({
      databroker_storage_type: 'redis',
      ...Object.fromEntries(secretKeys.map((key) => [key, shape])),
    });
    const result = parse(document);
    assert.ok(result.problems.length > 0);
    const text = JSON.stringify([...result.problems, ...result.warnings]);
    assert.ok(!text.includes(MARKER), `a secret leaked: ${text}`);
  }
  const viaEnv = parse(base(), Object.fromEntries(secretKeys.map((key) => [key.toUpperCase(), MARKER])));
  assert.ok(!JSON.stringify(viaEnv.problems).includes(MARKER));
});

test('a parsed Config prints secrets as [redacted] in JSON, inspect and template strings', () => {
  const config = valid(
    base({
      shared_secret: SECRET_32,
      signing_key: EC_KEY_PEM,
      authenticate_service_url: 'https://auth.example.com',
      idp_provider: 'google',
      idp_client_id: 'id',
      idp_client_secret: MARKER,
    }),
  );
  assert.ok(!JSON.stringify(config).includes(MARKER));
  assert.ok(!inspect(config, { depth: 10 }).includes(MARKER));
  assert.ok(!JSON.stringify(config).includes(SECRET_32));
  assert.equal(`${new Secret(MARKER)}`, '[redacted]');
  assert.equal(config.idp_client_secret?.reveal(), MARKER);
});

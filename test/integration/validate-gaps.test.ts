// Issue 33 item 14 through the command an operator runs: `portcullis validate` names every key of
// a config that was accepted before but could not work as meant, exits 1, and prints no stack.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SIGN_IN_YAML } from '../support/sign-in-config.js';

const bin = new URL('../../bin/portcullis.mjs', import.meta.url).pathname;

function validate(bytes: Buffer): { status: number | null; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-validate-'));
  try {
    const path = join(dir, 'config.yaml');
    writeFileSync(path, bytes);
    const result = spawnSync(process.execPath, [bin, 'validate', '--config', path], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { status: result.status, stderr: result.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('validate names each gap: from, to, cookies, callback path, admin address, scopes, placeholders, claims', () => {
  const config = [
    'insecure_server: true',
    'address: ":8080"',
    SIGN_IN_YAML.trimEnd(),
    'idp_scopes: [profile, email]',
    'cookie_domain: co.uk',
    'cookie_expire: 0s',
    'authenticate_callback_path: /.portcullis/cb',
    'envoy_admin_address: 0.0.0.0:9901',
    'shared_secret: ${SHARED_SECRET}',
    'jwt_claims_headers: {Authorization: email}',
    'routes:',
    '  - from: https://app.example.com.',
    '    to: http://10.0.0.1:80',
    '  - from: https://b*.example.com',
    '    to: http://10.0.0.1:80',
    '  - from: https://c.example.com:0',
    '    to: http://10.0.0.1:80',
    '  - from: https://d.example.com.*',
    '    to: http://10.0.0.1:80',
    '  - from: https://e.example.com',
    '    to: http://169.254.169.254/',
    '  - from: https://f.example.com',
    '    to: http://user:pw@10.0.0.1:80',
    '  - from: https://g.example.com',
    '    to: http://127.0.0.1:5443',
    '',
  ].join('\n');
  const result = validate(Buffer.from(config));
  assert.equal(result.status, 1, result.stderr);
  for (const expected of [
    /routes\[0\]\.from: .*end with a dot/,
    /routes\[1\]\.from: .*whole labels/,
    /routes\[2\]\.from: .*port 0/,
    /routes\[3\]\.from: .*registrable name/,
    /routes\[4\]\.to: .*metadata/,
    /routes\[5\]\.to: .*user credentials/,
    /routes\[6\]\.to: .*own grpc_address/,
    /idp_scopes: .*openid/,
    /cookie_domain: .*public suffix/,
    /cookie_expire: .*0s/,
    /authenticate_callback_path: .*\/\.portcullis\//,
    /envoy_admin_address: .*loopback/,
    /shared_secret: .*\$\{SHARED_SECRET\}/,
    /jwt_claims_headers\.Authorization: /,
  ])
    assert.match(result.stderr, expected);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
});

test('validate refuses a file that is not UTF-8, naming the line', () => {
  const result = validate(
    Buffer.concat([
      Buffer.from('insecure_server: true\nroutes: []\n# deny: '),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('\n'),
    ]),
  );
  assert.equal(result.status, 1, result.stderr);
  assert.match(result.stderr, /not valid UTF-8 \(line 3\)/);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
});

test('validate refuses settings that did less than they said, naming each key (issue 37 item 4)', () => {
  const config = [
    'insecure_server: true',
    'address: ":8080"',
    SIGN_IN_YAML.trimEnd(),
    'idp_provider: hosted',
    'idp_request_params: {prompt: login, state: fixed, redirect_uri: "https://evil.example/cb"}',
    'health_check_addr: ":8081"',
    'routes:',
    '  - from: https://app.example.com',
    '    to: http://10.0.0.1:80',
    '',
  ].join('\n');
  const result = validate(Buffer.from(config));
  assert.equal(result.status, 1, result.stderr);
  for (const expected of [
    /idp_provider: "hosted" is refused: there is no hosted authenticate service .*authenticate_service_url/,
    /idp_request_params\.state: is set by the sign-in flow itself/,
    /idp_request_params\.redirect_uri: is set by the sign-in flow itself/,
    /health_check_addr: is not supported by Portcullis: health is served on metrics_address/,
  ])
    assert.match(result.stderr, expected);
  assert.doesNotMatch(result.stderr, /idp_request_params\.prompt/);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
});

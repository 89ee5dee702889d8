// The commands operators meet first, run as a user would: `portcullis validate`, `--version`,
// `config migrate`, with both `--config` and the Go-style `-config`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { versionString } from '../../../src/cmd/version.js';
import { signInLines } from '../../support/sign-in-config.js';

const BIN = new URL('../../../bin/portcullis.mjs', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'portcullis-cli-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

function run(
  args: string[],
  env: Record<string, string> = {},
): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

test('--version prints MAJOR.MINOR.PATCH+GITHASH', () => {
  const { code, stdout } = run(['--version']);
  assert.equal(code, 0);
  assert.match(stdout.trim(), /^\d+\.\d+\.\d+\+([0-9a-f]{12}|unknown)$/);
  assert.equal(
    versionString({ PORTCULLIS_GIT_HASH: 'ABCDEF0123456789abcdef' }).split('+')[1],
    'abcdef012345',
  );
});

test('validate: exit 0 for a valid config', () => {
  const path = write(
    'ok.toml',
    `insecure_server = true\n${signInLines('toml')}[[routes]]\nfrom = "https://a.example.com"\nto = "http://10.0.0.1:80"\n`,
  );
  const { code, stdout } = run(['validate', '-config', path]);
  assert.equal(code, 0);
  assert.match(stdout, /valid \(1 routes/);
});

test('validate: exit 1 listing every problem with its key path and YAML line', () => {
  const path = write(
    'bad.yaml',
    [
      'address: nowhere',
      'headers: {X-A: b}',
      'adress: ":1"',
      'routes:',
      '  - from: https://a.example.com/path',
      '    to: http://a',
      '  - from: https://b.example.com',
      '    to: http://b',
      '    policy:',
      '      - allow:',
      '          and: [{email: a}, {emial: b}]',
      '',
    ].join('\n'),
  );
  const { code, stderr } = run(['validate', '--config', path], { SHARED_SECRET: 'c2hvcnQ=' });
  assert.equal(code, 1);
  for (const expected of [
    'address: "nowhere" is not an address; write host:port or :port (for example :443 or 127.0.0.1:8080) (line 1)',
    'headers: headers was removed: use set_response_headers',
    'routes[0].from: config: policy source url (https://a.example.com/path) contains a path, but it should be set using the path field instead (line 5)',
    'routes[1].policy[0].allow.and[1]: unknown policy criterion: emial (did you mean email?) (line 11)',
    'SHARED_SECRET: must be base64 of 32 bytes, got 5 bytes',
    'certificate: no TLS certificate is configured',
    'adress: unknown option (did you mean address?) (line 3)',
  ]) {
    assert.ok(stderr.includes(expected), `missing "${expected}" in:\n${stderr}`);
  }
  assert.ok(!/\n\s+at /.test(stderr), 'no stack trace');
});

test('validate: a malformed file is one line with the file and line; a missing --config is explained', () => {
  const path = write('broken.json', '{\n "a": 1,\n "b": ]\n}\n');
  const broken = run(['validate', '--config', path]);
  assert.equal(broken.code, 1);
  assert.match(broken.stderr, /broken\.json: malformed JSON: unexpected "\]" \(line 3\)/);
  const missing = run(['validate']);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no config file given: use --config <file>/);
});

test('config migrate prints the migrated config and the changes', () => {
  const path = write('old.yaml', 'insecure_server: true\ncache_service_url: https://db:5443\n');
  const { code, stdout, stderr } = run(['config', 'migrate', '--config', path]);
  assert.equal(code, 0, stderr);
  assert.equal(stdout, 'insecure_server: true\ndatabroker_service_url: https://db:5443\n');
  assert.match(stderr, /- cache_service_url: renamed cache_service_url to databroker_service_url/);
});

// Issue 33 item 14: values that were accepted but could never work as meant, or weakened
// security silently, are errors naming their key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfigFile } from '../../../src/config/load-file.js';
import { formatProblem } from '../../../src/shared/errors.js';
import { assertProblem, base, problems, valid } from './helpers.js';

const route = (extra: Record<string, unknown>): Record<string, unknown> =>
  base({ routes: [{ from: 'https://app.example.com', to: 'http://10.0.0.1:8080', ...extra }] });

test('a config file or referenced file that is not UTF-8 is refused with its line, not replaced', () => {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-utf8-'));
  try {
    const file = join(dir, 'config.yaml');
    const deny = Buffer.concat([
      Buffer.from('insecure_server: true\naddress: ":8080"\nroutes:\n  - from: https://a.example.com\n'),
      Buffer.from(
        '    to: http://10.0.0.1:80\n    allow_public_unauthenticated_access: true\n    name: "caf',
      ),
      Buffer.from([0xe9]),
      Buffer.from('"\n'),
    ]);
    writeFileSync(file, deny);
    const result = loadConfigFile(file, {});
    assert.equal(result.config, undefined);
    const lines = result.problems.map(formatProblem).join('\n');
    assert.match(lines, /not valid UTF-8 \(line 7\)/, lines);
    writeFileSync(
      file,
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('insecure_server: true\n')]),
    );
    assert.deepEqual(loadConfigFile(file, {}).problems, [], 'a BOM is fine');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('from: no trailing dot, no port 0, wildcards only as whole labels, none after a registrable name', () => {
  assertProblem(
    problems(route({ from: 'https://app.example.com.' })),
    'routes[0].from',
    'must not end with a dot',
  );
  assertProblem(problems(route({ from: 'https://app.example.com:0' })), 'routes[0].from', 'port 0');
  assertProblem(problems(route({ from: 'https://a*.example.com' })), 'routes[0].from', 'whole labels only');
  assertProblem(
    problems(route({ from: 'https://app.example.com.*' })),
    'routes[0].from',
    'registrable name example.com',
  );
  for (const from of [
    'https://*.example.com',
    'https://a.*.example.com',
    'https://intranet.*',
    'https://corp.example.*',
  ])
    valid(route({ from }));
});

test('to: no user credentials, no link-local or metadata address, not Portcullis itself, unless allowed', () => {
  assertProblem(problems(route({ to: 'http://user:pw@10.0.0.1:80' })), 'routes[0].to', 'user credentials');
  for (const to of [
    'http://169.254.169.254/latest/meta-data/',
    'http://[fe80::1]:80',
    'http://[::ffff:169.254.169.254]/',
    'h2c://0xa9fea9fe:80',
    'http://metadata.google.internal/',
    'http://100.100.100.200/',
  ])
    assertProblem(problems(route({ to })), 'routes[0].to', 'metadata');
  assertProblem(
    problems(route({ to: ['http://10.0.0.1:80', 'http://127.0.0.1:5443'] })),
    'routes[0].to[1]',
    'own grpc_address',
  );
  assertProblem(problems(route({ to: 'http://localhost:9901' })), 'routes[0].to', 'own envoy_admin_address');
  assertProblem(
    problems(
      base({
        metrics_address: ':9090',
        routes: [{ from: 'https://m.example.com', to: 'http://127.0.0.1:9090' }],
      }),
    ),
    'routes[0].to',
    'own metrics_address',
  );
  valid(route({ to: 'http://169.254.169.254/', allow_restricted_upstream: true }));
  valid(route({ to: 'http://10.0.0.1:5443' }));
});

test('global settings that cannot work or weaken security are errors at their key', () => {
  assertProblem(problems(base({ cookie_domain: 'co.uk' })), 'cookie_domain', 'public suffix');
  assertProblem(problems(base({ cookie_domain: '.github.io' })), 'cookie_domain', 'public suffix');
  valid(base({ cookie_domain: 'example.com' }));
  assertProblem(problems(base({ cookie_expire: '0s' })), 'cookie_expire', 'is 0s');
  assertProblem(
    problems(base({ decision_token_lifetime: '10m' })),
    'decision_token_lifetime',
    'longer than 5m',
  );
  assertProblem(problems(base({ decision_token_lifetime: 'soon' })), 'decision_token_lifetime', '');
  valid(base({ decision_token_lifetime: '5m' }));
  valid(base({ decision_token_lifetime: '0s' }));
  assertProblem(
    problems(base({ authenticate_callback_path: '/.portcullis/callback' })),
    'authenticate_callback_path',
    'under /.portcullis/',
  );
  assertProblem(problems(base({ envoy_admin_address: '0.0.0.0:9901' })), 'envoy_admin_address', 'loopback');
  assertProblem(problems(base({ envoy_admin_address: ':9901' })), 'envoy_admin_address', 'loopback');
  valid(base({ envoy_admin_address: '[::1]:9901' }));
  assertProblem(problems(base({ idp_scopes: ['profile', 'email'] })), 'idp_scopes', 'lacks openid');
  valid(base({ idp_scopes: ['openid', 'email'] }));
  assertProblem(
    problems(base({ idp_provider_url: 'https://idp.example.com/realm?x=1' })),
    'idp_provider_url',
    'query or fragment',
  );
});

test('a ${VAR} left literal is an error at its key, in the file, the routes and the environment', () => {
  assertProblem(problems(base({ shared_secret: '${SHARED_SECRET}' })), 'shared_secret', 'does not expand');
  assertProblem(
    problems(route({ allowed_users: ['${ADMIN_EMAIL}'] })),
    'routes[0].allowed_users[0]',
    '${ADMIN_EMAIL}',
  );
  assertProblem(problems(base(), { COOKIE_DOMAIN: '${DOMAIN}' }), 'COOKIE_DOMAIN', 'does not expand');
  valid(route({ response: { status: 200, body: 'let a = `${b}`' }, to: undefined }));
  valid(route({ set_request_headers: { 'X-Cost': '$5' } }));
});

test('jwt_claims_headers cannot write host, authorization, cookie or x-envoy-* headers', () => {
  for (const header of ['Host', 'authorization', 'Cookie', 'x-envoy-original-path'])
    assertProblem(
      problems(base({ jwt_claims_headers: { [header]: 'email' } })),
      `jwt_claims_headers.${header}`,
      'trusts',
    );
  valid(base({ jwt_claims_headers: { 'X-Email': 'email' } }));
});

test('base64 routes that are not UTF-8 get the routes message, not a replaced character', () => {
  assertProblem(
    problems(base(), { ROUTES: Buffer.from([0x2d, 0x20, 0xff, 0xfe]).toString('base64') }),
    'ROUTES',
    'expected a JSON list of routes',
  );
});

// Routes that answer by themselves (`redirect`, `response`): translate gives them an `answer` and
// no cluster, keeps their identity (the answer kind is part of the id), their policy and their
// response headers; a forwarding route carries no `answer` key; `validate` accepts them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PassThrough } from 'node:stream';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../../src/config/parse-config.js';
import type { Config } from '../../../src/config/types.js';
import { translate } from '../../../src/translate/translate.js';
import { routeIdentity } from '../../../src/translate/route-identity.js';
import type { IR } from '../../../src/ir/types.js';
import { runValidate } from '../../../src/cmd/compile-command.js';
import { SIGN_IN, SIGN_IN_YAML } from '../../support/sign-in-config.js';

const OPTIONS = { systemCaFile: '/ca.pem' };

function parse(routes: readonly Record<string, unknown>[]): Config {
  const parsed = parseConfig({
    document: { ...SIGN_IN, insecure_server: true, address: ':8080', routes },
    env: {},
    readText: () => '',
  });
  assert.deepEqual(parsed.problems, []);
  assert.ok(parsed.config, 'the config parses');
  return parsed.config;
}

function irOf(config: Config): IR {
  const result = translate(config, OPTIONS);
  assert.deepEqual(result.problems, []);
  assert.ok(result.ir, 'translated');
  return result.ir;
}

// The catch-all forwarding route comes last: first, it would shadow the two after it.
const ROUTES = [
  {
    from: 'https://app.test',
    prefix: '/old/',
    redirect: { host_redirect: 'new.test', prefix_rewrite: '/new/', response_code: 307, strip_query: true },
    allowed_users: ['ada@example.com'],
  },
  { from: 'https://app.test', path: '/moved', redirect: { https_redirect: true } },
  { from: 'https://app.test', to: 'http://10.0.0.1:8080', allow_any_authenticated_user: true },
  {
    from: 'https://status.test',
    response: { status: 503, body: 'down for maintenance' },
    allow_public_unauthenticated_access: true,
    set_response_headers: { 'Content-Type': 'text/plain' },
  },
];

test('a redirect or response route gets an answer and no cluster; a forwarding route has no answer key', () => {
  const config = parse(ROUTES);
  const ir = irOf(config);
  const app = ir.virtualHosts.find((vhost) => vhost.name === 'app.test');
  const status = ir.virtualHosts.find((vhost) => vhost.name === 'status.test');
  assert.ok(app && status);
  const [prefixed, moved, forward] = app.routes;
  assert.ok(forward && prefixed && moved);
  assert.equal('answer' in forward, false);
  assert.deepEqual(prefixed.answer, {
    kind: 'redirect',
    httpsRedirect: false,
    scheme: undefined,
    host: 'new.test',
    port: undefined,
    path: { kind: 'prefix', value: '/new/' },
    code: 307,
    stripQuery: true,
  });
  assert.deepEqual(moved.answer, {
    kind: 'redirect',
    httpsRedirect: true,
    scheme: undefined,
    host: undefined,
    port: undefined,
    path: undefined,
    code: 301,
    stripQuery: false,
  });
  assert.deepEqual(status.routes[0]?.answer, { kind: 'response', status: 503, body: 'down for maintenance' });
  assert.deepEqual(
    ir.clusters.map((cluster) => cluster.name),
    [forward.clusterName],
    'only the forwarding route has a cluster',
  );
  // The ids are the route identities (the answer kind included), the policy and headers kept.
  assert.deepEqual(
    [prefixed, moved, forward, status.routes[0]].map((route) => route?.id),
    config.routes.map((route) => routeIdentity(route).id),
  );
  assert.ok(prefixed.policy.length > 0, 'the allow list is the redirect route policy');
  assert.equal(prefixed.public, false);
  assert.equal(status.routes[0]?.public, true);
  assert.deepEqual(status.routes[0]?.responseHeadersToSet, { 'Content-Type': 'text/plain' });
});

test('a response route shadowed by an earlier route with the same matcher is still reported', () => {
  const config = parse([
    { from: 'https://a.test', response: { status: 200, body: 'one' } },
    { from: 'https://a.test', redirect: { host_redirect: 'b.test' } },
  ]);
  const result = translate(config, OPTIONS);
  assert.equal(result.ir, undefined);
  assert.deepEqual(
    result.problems.map((problem) => problem.path),
    ['routes[1]'],
  );
  assert.match(result.problems[0]?.message ?? '', /^never matches: routes\[0\] comes first/);
});

test('validate accepts redirect and response routes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'answers-'));
  const yaml = (key: string, value: string): string => {
    const path = join(dir, `${key}.yaml`);
    writeFileSync(
      path,
      [
        'insecure_server: true',
        'address: ":8080"',
        SIGN_IN_YAML.trimEnd(),
        'routes:',
        '  - from: https://a.example.com',
        `    ${key}: ${value}`,
        '',
      ].join('\n'),
    );
    return path;
  };
  for (const [key, value] of [
    ['redirect', '{ https_redirect: true, response_code: 308 }'],
    ['response', '{ status: 403, body: no }'],
  ] as const) {
    const err = new PassThrough();
    assert.equal(
      await runValidate(yaml(key, value), new PassThrough(), err),
      0,
      `${key}: ${String(err.read())}`,
    );
  }
});

// `pass_request_identity_headers`: only names the identity strip removes, lower-cased (issue 33, item 10).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertProblem, base, problems, valid } from './helpers.js';
import { isIdentityHeader } from '../../../src/shared/identity-headers.js';

const route = (extra: Record<string, unknown>): Record<string, unknown> =>
  base({ routes: [{ from: 'https://app.example.com', to: 'http://10.0.0.1:8080', ...extra }] });

test('listed identity headers are kept lower-cased and once; unset means none', () => {
  const config = valid(
    route({
      pass_request_identity_headers: ['Impersonate-User', 'impersonate-user', 'X-Auth-Request-Email'],
    }),
  );
  assert.deepEqual(config.routes[0]?.pass_request_identity_headers, [
    'impersonate-user',
    'x-auth-request-email',
  ]);
  assert.equal(valid(route({})).routes[0]?.pass_request_identity_headers, undefined);
});

test('a name the strip does not remove, a bad name or a non-list is an error naming the entry', () => {
  assertProblem(
    problems(route({ pass_request_identity_headers: ['X-Forwarded-For'] })),
    'routes[0].pass_request_identity_headers[0]',
    'is not an identity header Portcullis strips',
  );
  assertProblem(
    problems(route({ pass_request_identity_headers: ['x-forwarded-user', 'bad name'] })),
    'routes[0].pass_request_identity_headers[1]',
    'is not a valid header name',
  );
  assertProblem(
    problems(route({ pass_request_identity_headers: { a: 1 } })),
    'routes[0].pass_request_identity_headers',
    '',
  );
});

test('the shared list: whole names and prefixes, any letter case', () => {
  for (const name of ['Impersonate-User', 'IMPERSONATE-GROUP', 'impersonate-uid', 'Impersonate-Extra-Scopes'])
    assert.ok(isIdentityHeader(name), name);
  for (const name of [
    'X-Forwarded-User',
    'x-forwarded-email',
    'X-Forwarded-Groups',
    'X-Forwarded-Preferred-Username',
  ])
    assert.ok(isIdentityHeader(name), name);
  assert.ok(isIdentityHeader('X-Auth-Request-Access-Token'));
  for (const name of ['X-Forwarded-For', 'X-Forwarded-Proto', 'Authorization', 'X-Forwarded-User-Agent'])
    assert.ok(!isIdentityHeader(name), name);
});

// Two different session credentials in one request are refused, never resolved by picking one
// (issue 33, item 11: a cookie tossed from a sibling subdomain must not choose the session).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { authzFixture, FIXTURE_IDP, FIXTURE_ROUTE } from '../../support/authz-fixture.js';
import type { AuthorizeRequest } from '../../../src/authorize/decision.js';
import { readCredentials } from '../../../src/authorize/request-credentials.js';
import { cookieValues } from '../../../src/session/cookie.js';

const { sessions, handles, authorize } = authzFixture(11);

function ask(headers: Record<string, string>, overrides: Partial<AuthorizeRequest> = {}): AuthorizeRequest {
  return {
    routeId: FIXTURE_ROUTE,
    requestId: 'req-conflict',
    method: 'GET',
    scheme: 'https',
    host: 'app.test',
    path: '/',
    query: '',
    headers: { accept: 'text/html', ...headers },
    sourceIp: '10.0.0.1',
    ...overrides,
  };
}

test('cookieValues lists every value of a name, by the cookie library rules', () => {
  assert.deepEqual(cookieValues('a=1; _p=x; b=2;_p = y ; _p=x', '_p'), ['x', 'y', 'x']);
  assert.deepEqual(cookieValues('_px=1; p=2', '_p'), []);
  assert.deepEqual(cookieValues(undefined, '_p'), []);
});

test('readCredentials: one credential, or the same one twice, is no conflict; two different ones are', () => {
  const read = (headers: Record<string, string>) => readCredentials(headers, '_portcullis');
  assert.equal(read({ cookie: '_portcullis=a' }).conflicting, false);
  assert.equal(read({ cookie: '_portcullis=a; _portcullis=a' }).conflicting, false);
  assert.equal(read({ cookie: '_portcullis=a', authorization: 'Portcullis a' }).conflicting, false);
  assert.equal(read({ authorization: 'Portcullis a' }).conflicting, false);
  assert.equal(read({ cookie: '_portcullis=a; _portcullis=b' }).conflicting, true);
  assert.equal(read({ cookie: 'x=1; _portcullis=a;_portcullis =b' }).conflicting, true);
  assert.equal(read({ cookie: '_portcullis=a', authorization: 'Portcullis b' }).conflicting, true);
  assert.equal(read({ cookie: '_portcullis=a', authorization: 'Bearer b' }).conflicting, false);
});

test('the authorizer answers 400 for two sessions, on a route and on its own endpoints, before any lookup', async () => {
  await sessions.put({
    id: 'victim',
    userId: 'ada',
    email: 'ada@example.com',
    emailVerified: true,
    name: 'Ada',
    groups: [],
    claims: {},
    issuedAt: 0,
    expiresAt: Number.MAX_SAFE_INTEGER,
    idpId: FIXTURE_IDP,
  });
  const victim = handles.issue('victim');
  const tossed = handles.issue('attacker');
  const alone = await authorize(ask({ cookie: `_portcullis=${victim}` }));
  assert.equal(alone.kind, 'allow');
  for (const [name, headers] of [
    ['two cookies', { cookie: `_portcullis=${tossed}; _portcullis=${victim}` }],
    ['cookie and token', { cookie: `_portcullis=${victim}`, authorization: `Portcullis ${tossed}` }],
  ] as const) {
    for (const overrides of [{}, { routeId: undefined, path: '/.portcullis/sign_out' }]) {
      const decision = await authorize(ask(headers, overrides));
      assert.equal(decision.kind, 'deny', name);
      assert.ok(decision.kind === 'deny');
      assert.equal(decision.status, 400, name);
      assert.deepEqual(decision.reasons, ['conflicting-credentials'], name);
      assert.match(decision.body, /two different Portcullis sessions/, name);
      assert.match(decision.body, /req-conflict/, name);
    }
  }
});

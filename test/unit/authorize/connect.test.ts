// A CONNECT (a TCP route's tunnel) is answered as an API client is, whatever its Accept header: a
// 401 without a session (never a sign-in redirect a tunnel client cannot follow), and a 403 whose
// reason names the route's target and the policy's reasons.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requestClientKind } from '../../../src/authorize/client-kind.js';
import type { AuthorizeRequest } from '../../../src/authorize/decision.js';
import { authzFixture, FIXTURE_ROUTE } from '../../support/authz-fixture.js';

const { authorize } = authzFixture(9);

const connect = (headers: Record<string, string>): AuthorizeRequest => ({
  routeId: FIXTURE_ROUTE,
  requestId: 'r1',
  method: 'CONNECT',
  scheme: 'https',
  host: 'app.test:5432',
  path: '',
  query: '',
  headers,
  sourceIp: '10.0.0.1',
});

test('a CONNECT is an API client whatever it accepts; other requests go by their headers', () => {
  for (const accept of [undefined, 'text/html', 'application/json']) {
    const headers = accept === undefined ? {} : { accept };
    assert.equal(requestClientKind({ method: 'CONNECT', headers }), 'json', String(accept));
  }
  assert.equal(requestClientKind({ method: 'GET', headers: { accept: 'text/html' } }), 'browser');
  assert.equal(requestClientKind({ method: 'GET', headers: { accept: 'application/json' } }), 'json');
});

test('a CONNECT without a session gets a 401 JSON answer, never a sign-in redirect', async () => {
  const decision = await authorize(connect({ accept: 'text/html' }));
  assert.equal(decision.kind, 'deny');
  assert.ok(decision.kind === 'deny');
  assert.equal(decision.status, 401);
  assert.deepEqual(JSON.parse(decision.body), {
    error: 'Unauthorized',
    reason: 'Sign in to access this page.',
    request_id: 'r1',
  });
});

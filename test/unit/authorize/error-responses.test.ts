// The authorizer's deny answers: browsers get the shared page shell, API and gRPC clients the
// bodies they always had.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { denyResponse } from '../../../src/authorize/error-responses.js';
import type { Decision } from '../../../src/authorize/decision.js';
import { PAGE_HEADERS } from '../../../src/shared/html-page.js';

/** The deny branch of a decision (every denyResponse is one). */
function denied(decision: Decision): Extract<Decision, { kind: 'deny' }> {
  assert.equal(decision.kind, 'deny');
  return decision as Extract<Decision, { kind: 'deny' }>;
}

test('HTML deny: the shared shell, escaped reason, request id, user page and sign-out links', () => {
  const decision = denied(denyResponse(403, 'not allowed <b>here</b>', 'req-<1>', 'browser', ['r']));
  assert.equal(decision.status, 403);
  assert.deepEqual(decision.headers, PAGE_HEADERS);
  assert.match(decision.body, /<html lang="en">/);
  assert.match(decision.body, /<h1>403 Forbidden<\/h1>/);
  assert.match(decision.body, /not allowed &lt;b&gt;here&lt;\/b&gt;/);
  assert.match(decision.body, /req-&lt;1&gt;/);
  assert.match(decision.body, /href="\/.portcullis\/"/);
  assert.match(decision.body, /href="\/.portcullis\/sign_out"/);
});

test('JSON and gRPC deny bodies are unchanged', () => {
  const json = denied(denyResponse(401, 'no session', 'req-1', 'json', []));
  assert.deepEqual(JSON.parse(json.body), {
    error: 'Unauthorized',
    reason: 'no session',
    request_id: 'req-1',
  });
  assert.deepEqual(json.headers, [
    ['content-type', 'application/json'],
    ['cache-control', 'no-store'],
  ]);
  const grpc = denied(denyResponse(403, 'no way', 'req-1', 'grpc', []));
  assert.equal(grpc.body, '');
  assert.deepEqual(new Map(grpc.headers).get('grpc-status'), '7');
});

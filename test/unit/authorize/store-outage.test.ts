// The authorizer when the session store cannot be reached (Redis or the databroker down): a
// session-bound request is answered 503 at once for every client kind, never an allow and never a
// sign-in redirect (signing in needs the store too: a loop); the warning is rate-limited; a public
// route never asks the store; other lookup errors are not mistaken for an outage.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAuthorizer } from '../../../src/authorize/authorizer.js';
import { buildAuthzState } from '../../../src/authorize/authz-state.js';
import type { AuthorizeRequest, Decision } from '../../../src/authorize/decision.js';
import { AssertionSigner } from '../../../src/authorize/identity/assertion-cache.js';
import { deriveSigningKey } from '../../../src/keys/signing-key.js';
import type { IR } from '../../../src/ir/types.js';
import { SessionHandles } from '../../../src/session/handle.js';
import type { Session } from '../../../src/session/session.js';
import { recordingLogger } from '../../../src/shared/logger.js';
import { outage } from '../authenticate/failing-store.js';

const PROTECTED = 'protectedroute01';
const PUBLIC = 'publicroute00001';
const secret = Buffer.alloc(32, 9);
const handles = new SessionHandles(secret);
const rule = (kind: string) => ({
  action: 'allow',
  and: [],
  or: [{ kind, path: 'p' }],
  not: [],
  nor: [],
  path: 'p',
});
const ir = {
  virtualHosts: [
    {
      name: 'app.test',
      domains: ['app.test'],
      routes: [
        {
          id: PROTECTED,
          public: false,
          passIdentityHeaders: true,
          policy: [rule('authenticated_user')],
          idpId: 'idp',
        },
        { id: PUBLIC, public: true, passIdentityHeaders: false, policy: [rule('accept')], idpId: 'idp' },
      ],
    },
  ],
  authorize: {
    claimHeaders: {},
    authenticateUrl: 'https://auth.test',
    cookieName: '_portcullis',
    issuerFormat: 'host_only',
  },
} as unknown as IR;
const state = buildAuthzState(ir);

/** An authorizer whose store answers with `lookup`; `calls` counts lookups, `clock.now` drives the rate limit. */
function authorizer(lookup: (id: string) => Session | undefined | Promise<Session | undefined>) {
  const clock = { now: 0 };
  const calls: string[] = [];
  const logger = recordingLogger();
  const authorize = createAuthorizer({
    state: () => state,
    sessions: {
      get: (id) => {
        calls.push(id);
        return lookup(id);
      },
    },
    verifyHandle: (handle) => handles.verify(handle),
    signer: () => new AssertionSigner(deriveSigningKey(secret), []),
    logger,
    now: () => clock.now,
  });
  return { authorize, calls, logger, clock };
}

function request(routeId: string, headers: Record<string, string>): AuthorizeRequest {
  return {
    routeId,
    requestId: 'req-42',
    method: 'GET',
    scheme: 'https',
    host: 'app.test',
    path: '/x',
    query: '',
    headers: { cookie: `_portcullis=${handles.issue('session-1')}`, ...headers },
    sourceIp: '10.0.0.1',
  };
}

const header = (decision: Decision, name: string): string | undefined =>
  decision.kind === 'deny' ? decision.headers.find(([key]) => key === name)?.[1] : undefined;

function assertUnavailable(decision: Decision): asserts decision is Extract<Decision, { kind: 'deny' }> {
  assert.equal(decision.kind, 'deny');
  assert.equal(decision.status, 503);
  assert.deepEqual(decision.reasons, ['session-store-unavailable']);
  assert.equal(header(decision, 'location'), undefined, 'never a sign-in redirect');
  assert.equal(header(decision, 'retry-after'), '5');
}

test('a rejecting store: 503 page for browsers, JSON for API clients, UNAVAILABLE for gRPC', async () => {
  const { authorize } = authorizer(() => Promise.reject(outage()));
  const browser = await authorize(request(PROTECTED, { accept: 'text/html' }));
  assertUnavailable(browser);
  assert.match(browser.body, /Sessions are temporarily unavailable; try again in a moment\./);
  assert.match(browser.body, /req-42/);
  assert.match(header(browser, 'content-type') ?? '', /^text\/html/);
  const api = await authorize(request(PROTECTED, { accept: 'application/json' }));
  assertUnavailable(api);
  assert.deepEqual(JSON.parse(api.body), {
    error: 'Service Unavailable',
    reason: 'Sessions are temporarily unavailable; try again in a moment.',
    request_id: 'req-42',
  });
  const grpc = await authorize(request(PROTECTED, { 'content-type': 'application/grpc' }));
  assertUnavailable(grpc);
  assert.equal(header(grpc, 'grpc-status'), '14');
});

test('a store that throws synchronously is the same 503, answered without a promise', () => {
  const { authorize } = authorizer(() => {
    throw outage();
  });
  const decision = authorize(request(PROTECTED, {}));
  assert.ok(!(decision instanceof Promise));
  assertUnavailable(decision);
});

test('the warning is logged at most once per 10 s, counting the outages it did not log', async () => {
  const { authorize, logger, clock } = authorizer(() => Promise.reject(outage()));
  for (let i = 0; i < 5; i += 1) assertUnavailable(await authorize(request(PROTECTED, {})));
  clock.now = 9_999;
  assertUnavailable(await authorize(request(PROTECTED, {})));
  clock.now = 10_000;
  assertUnavailable(await authorize(request(PROTECTED, {})));
  const warnings = logger.records.filter(
    (record) => record.msg?.startsWith('session store unavailable') === true,
  );
  assert.equal(warnings.length, 2);
  assert.ok(warnings.every((record) => record.level === 'warn'));
  assert.equal((warnings[0]?.obj as { code?: string }).code, 'STORE_UNAVAILABLE');
  assert.equal((warnings[1]?.obj as { notLogged?: number }).notLogged, 5);
  assert.ok(!JSON.stringify(logger.records).includes('    at '), 'no stack trace');
});

test('a public route never asks the store, with or without a session cookie', async () => {
  const { authorize, calls } = authorizer(() => Promise.reject(outage()));
  const withCookie = await authorize(request(PUBLIC, {}));
  assert.equal(withCookie.kind, 'allow');
  assert.deepEqual(calls, []);
});

test('without a session handle the store is not asked: browsers still go to sign in', async () => {
  const { authorize, calls } = authorizer(() => Promise.reject(outage()));
  const decision = await authorize({ ...request(PROTECTED, {}), headers: {} });
  assert.equal(decision.kind === 'deny' ? decision.status : 0, 302);
  assert.deepEqual(calls, []);
});

test('a lookup failing for another reason is not an outage: it propagates (Envoy answers 503 on error)', async () => {
  const { authorize } = authorizer(() => Promise.reject(new TypeError('a bug')));
  await assert.rejects(Promise.resolve(authorize(request(PROTECTED, {}))), TypeError);
});

// The AuthorizeService's decision-token cache (authorize/fast-path/decision-minter.ts, held by the
// service): a session the store invalidates loses its tokens, installing a config drops them all,
// and the service hands its `revokedUntil` to the authorizer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSetCookie } from 'cookie';
import type { AuthorizeRequest, Decision } from '../../../../src/authorize/decision.js';
import { AuthorizeService } from '../../../../src/authorize/service.js';
import { decisionSessionId } from '../../../../src/contract/fast-path.js';
import type { Session } from '../../../../src/session/session.js';
import { silentLogger } from '../../../../src/shared/logger.js';
import { memorySessionStore } from '../../../support/session-store.js';
import { mintFixtureIr, mintFixtureKeys, routeIdOf } from '../../../support/mint-fixture.js';

const keys = mintFixtureKeys();
const ir = mintFixtureIr({}, keys);

function session(id: string, claims: Record<string, unknown> = {}): Session {
  return {
    id,
    userId: id,
    email: `${id}@example.com`,
    emailVerified: true,
    name: id,
    groups: [],
    claims,
    issuedAt: Date.now(),
    expiresAt: Date.now() + 3_600_000,
    idpId: ir.virtualHosts[0]?.routes[0]?.idpId ?? '',
  };
}

function ask(sessionId: string): AuthorizeRequest {
  return {
    routeId: routeIdOf(ir, 'any'),
    requestId: 'r',
    method: 'GET',
    scheme: 'https',
    host: 'app.test',
    path: '/any',
    query: '',
    headers: { cookie: `_portcullis=${keys.handles.issue(sessionId)}` },
    sourceIp: '10.0.0.1',
  };
}

async function tokenOf(decision: Decision | Promise<Decision>): Promise<string | undefined> {
  const answered = await decision;
  assert.equal(answered.kind, 'allow');
  const setCookie = answered.kind === 'allow' ? answered.responseHeaders?.[0]?.[1] : undefined;
  return setCookie === undefined ? undefined : parseSetCookie(setCookie).value;
}

test('the service mints, reuses, and forgets on invalidation and on install', async () => {
  const sessions = memorySessionStore();
  const service = new AuthorizeService(sessions, silentLogger);
  service.install(ir, keys);
  const authorize = service.authorizer();
  await sessions.put(session('ada', { department: 'eng' }));
  const first = await tokenOf(authorize(ask('ada')));
  assert.ok(first);
  const cached = authorize(ask('ada'));
  assert.ok(!(cached instanceof Promise), 'reused synchronously');
  assert.equal(await tokenOf(cached), first);

  // A refresh that changed the claims replaces the session: the store invalidates it.
  await sessions.put(session('ada', { department: 'ops' }));
  const afterInvalidate = authorize(ask('ada'));
  assert.ok(afterInvalidate instanceof Promise, 'minted anew');
  const second = await tokenOf(afterInvalidate);
  assert.ok(second && second !== first);

  service.install(ir, keys);
  const afterInstall = authorize(ask('ada'));
  assert.ok(afterInstall instanceof Promise, 'a new config: minted anew');
  assert.ok((await tokenOf(afterInstall)) !== second);
});

test('the service passes revokedUntil to the authorizer', async () => {
  const sessions = memorySessionStore();
  const revoked = new Map([[decisionSessionId('bob'), Date.now() + 60_000]]);
  const service = new AuthorizeService(sessions, silentLogger, { revokedUntil: (sid) => revoked.get(sid) });
  service.install(ir, keys);
  await sessions.put(session('bob'));
  await sessions.put(session('ada'));
  assert.equal(await tokenOf(service.authorizer()(ask('bob'))), undefined, 'revoked: no token');
  assert.ok(await tokenOf(service.authorizer()(ask('ada'))), 'another session still gets one');
});

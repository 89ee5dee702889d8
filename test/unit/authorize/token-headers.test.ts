// Request headers filled from the session (authorize/token-allow.ts, identity/token-headers.ts):
// the AuthorizeService opens a session's sealed tokens with the shared secret and sets the
// templated headers on each allow, over any client-sent copy; a missing or expired token refuses
// the request (401) instead of sending an empty or stale bearer, and no token is logged; the
// opened tokens are cached per session until the store replaces or drops it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeJwt, SignJWT } from 'jose';
import type { AuthorizeRequest, Decision } from '../../../src/authorize/decision.js';
import { SessionTokenCache } from '../../../src/authorize/identity/token-headers.js';
import { AuthorizeService } from '../../../src/authorize/service.js';
import { parseConfig } from '../../../src/config/parse-config.js';
import type { IR } from '../../../src/ir/types.js';
import { sealTokens } from '../../../src/session/session-tokens.js';
import type { Session } from '../../../src/session/session.js';
import { recordingLogger } from '../../../src/shared/logger.js';
import { translate } from '../../../src/translate/translate.js';
import { mintFixtureKeys } from '../../support/mint-fixture.js';
import { memorySessionStore } from '../../support/session-store.js';
import { SIGN_IN } from '../../support/sign-in-config.js';

const keys = mintFixtureKeys();
const NOW = Date.now();

const ir: IR = (() => {
  const parsed = parseConfig({
    document: {
      ...SIGN_IN,
      insecure_server: true,
      address: ':8080',
      routes: [
        {
          from: 'https://app.test',
          to: 'http://10.0.0.1:8080',
          allow_any_authenticated_user: true,
          set_request_headers: {
            Authorization: 'Bearer ${portcullis.access_token}',
            'X-Id-Token': '${portcullis.id_token}',
            'X-Groups': '${portcullis.claims.groups}',
            'X-Dept': 'dept=${portcullis.claims.department}',
          },
        },
        {
          from: 'https://claims.test',
          to: 'http://10.0.0.1:8080',
          allow_any_authenticated_user: true,
          set_request_headers: { 'X-Email': '${portcullis.claims.email}' },
        },
        {
          from: 'https://open.test',
          to: 'http://10.0.0.1:8080',
          policy: [{ allow: { or: [{ accept: true }] } }],
          set_request_headers: { Authorization: 'Bearer ${portcullis.access_token}' },
        },
      ],
    },
    env: {},
    readText: () => '',
  });
  assert.ok(parsed.config, JSON.stringify(parsed.problems));
  const translated = translate(parsed.config, { systemCaFile: '/ca.pem' });
  assert.ok(translated.ir, JSON.stringify(translated.problems));
  return translated.ir;
})();

const routeIdOf = (host: string): string => {
  const id = ir.virtualHosts.find((vhost) => vhost.name === host)?.routes[0]?.id;
  assert.ok(id);
  return id;
};

async function idToken(expiresInSeconds: number): Promise<string> {
  return new SignJWT({ sub: 'ada' })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime(Math.floor(NOW / 1000) + expiresInSeconds)
    .sign(new Uint8Array(32).fill(9));
}

async function session(
  id: string,
  tokens: { accessToken?: string; idToken?: string; accessTokenExpiresAt?: number } | undefined,
  claims: Record<string, unknown> = { groups: ['admins', 'staff'], email: 'ada@example.com' },
): Promise<Session> {
  return {
    id,
    userId: id,
    email: 'ada@example.com',
    emailVerified: true,
    name: id,
    groups: [],
    claims,
    issuedAt: NOW,
    expiresAt: NOW + 3_600_000,
    idpId: ir.virtualHosts[0]?.routes[0]?.idpId ?? '',
    ...(tokens === undefined
      ? {}
      : {
          tokens: await sealTokens(keys.sharedSecret, id, {
            accessToken: tokens.accessToken,
            refreshToken: 'rt',
            idToken: tokens.idToken,
            accessTokenExpiresAt: tokens.accessTokenExpiresAt ?? NOW + 3_600_000,
            // As sign-in records it: the ID token's exp, in ms.
            idTokenExpiresAt:
              tokens.idToken === undefined ? undefined : (decodeJwt(tokens.idToken).exp ?? 0) * 1000,
          }),
        }),
  };
}

function ask(
  sessionId: string | undefined,
  headers: Record<string, string> = {},
  host = 'app.test',
): AuthorizeRequest {
  return {
    routeId: routeIdOf(host),
    requestId: 'req-7',
    method: 'GET',
    scheme: 'https',
    host,
    path: '/',
    query: '',
    headers: {
      accept: 'application/json',
      ...(sessionId === undefined ? {} : { cookie: `_portcullis=${keys.handles.issue(sessionId)}` }),
      ...headers,
    },
    sourceIp: '10.0.0.1',
  };
}

function rig(): {
  sessions: ReturnType<typeof memorySessionStore>;
  authorize: (request: AuthorizeRequest) => Promise<Decision>;
  logger: ReturnType<typeof recordingLogger>;
} {
  const sessions = memorySessionStore();
  const logger = recordingLogger();
  const service = new AuthorizeService(sessions, logger);
  service.install(ir, keys);
  const authorizer = service.authorizer();
  return { sessions, logger, authorize: async (request) => authorizer(request) };
}

const headersOf = (decision: Decision): Map<string, string> => {
  assert.equal(decision.kind, 'allow', JSON.stringify(decision));
  return new Map(decision.kind === 'allow' ? decision.setHeaders.map(([k, v]) => [k, v] as const) : []);
};

test('an allow sets the access token, the ID token and claims, over client-sent copies', async () => {
  const { sessions, authorize } = rig();
  const id = await idToken(3600);
  await sessions.put(await session('ada', { accessToken: 'at-1', idToken: id }));
  const decision = await authorize(ask('ada', { authorization: 'Bearer forged', 'x-groups': 'root' }));
  const set = headersOf(decision);
  assert.equal(set.get('authorization'), 'Bearer at-1');
  assert.equal(set.get('x-id-token'), id);
  assert.equal(set.get('x-groups'), 'admins,staff');
  // No department claim: the header is left out whole and a client's copy removed.
  assert.equal(set.has('x-dept'), false);
  assert.ok(decision.kind === 'allow' && decision.removeHeaders.includes('x-dept'));
  assert.ok(decision.kind === 'allow' && !decision.removeHeaders.includes('authorization'));
  assert.equal(decision.kind === 'allow' && decision.responseHeaders, undefined, 'no decision cookie');
});

test('a route naming only claims needs no tokens; a request without a session is sent to sign in', async () => {
  const { sessions, authorize } = rig();
  await sessions.put(await session('bea', undefined));
  assert.equal(headersOf(await authorize(ask('bea', {}, 'claims.test'))).get('x-email'), 'ada@example.com');
  const anonymous = await authorize(ask(undefined));
  assert.ok(anonymous.kind === 'deny' && anonymous.status === 401);
  // A policy that admits anyone still needs a session to fill the headers from: sign in first.
  const open = await authorize(ask(undefined, { accept: 'text/html' }, 'open.test'));
  assert.ok(open.kind === 'deny' && open.status === 302, JSON.stringify(open));
  assert.equal(open.reasons[0], 'token-headers-need-session');
});

test('a missing or expired token refuses with 401 and logs the route and token, never a token', async () => {
  const { sessions, authorize, logger } = rig();
  const cases: [Session, string][] = [
    [await session('none', undefined), 'access-token-absent'],
    [await session('noid', { accessToken: 'at-noid' }), 'id-token-absent'],
    [
      await session('stale', {
        accessToken: 'at-stale',
        idToken: await idToken(3600),
        accessTokenExpiresAt: NOW - 1,
      }),
      'access-token-expired',
    ],
    [await session('oldid', { accessToken: 'at-oldid', idToken: await idToken(-60) }), 'id-token-expired'],
  ];
  for (const [stored, reason] of cases) {
    await sessions.put(stored);
    const decision = await authorize(ask(stored.id, { accept: 'text/html' }));
    assert.equal(decision.kind, 'deny', reason);
    assert.ok(decision.kind === 'deny' && decision.status === 401, reason);
    assert.deepEqual(decision.reasons, [reason]);
    assert.match(decision.kind === 'deny' ? decision.body : '', /Sign out and sign in again/);
  }
  const warnings = logger.records.filter((record) => record.level === 'warn');
  assert.equal(warnings.length, cases.length);
  assert.ok(warnings.every((record) => JSON.stringify(record.obj).includes('routes[0]')));
  const logged = JSON.stringify(logger.records);
  for (const secret of ['at-noid', 'at-stale', 'at-oldid', 'eyJ'])
    assert.ok(!logged.includes(secret), secret);
});

test('a refreshed session sends its new token: the store replacing it drops the cached one', async () => {
  const { sessions, authorize } = rig();
  const id = await idToken(3600);
  await sessions.put(await session('ada', { accessToken: 'at-1', idToken: id }));
  assert.equal(headersOf(await authorize(ask('ada'))).get('authorization'), 'Bearer at-1');
  await sessions.put(await session('ada', { accessToken: 'at-2', idToken: id }));
  assert.equal(headersOf(await authorize(ask('ada'))).get('authorization'), 'Bearer at-2');
  await sessions.delete('ada');
  const signedOut = await authorize(ask('ada'));
  assert.ok(signedOut.kind === 'deny' && signedOut.status === 401, 'a signed-out session sends nothing');
});

test('the cache opens once per sealed value, reopens when it changes, forgets on invalidate, and is bounded', async () => {
  let opens = 0;
  const cache = new SessionTokenCache(async (s) => {
    opens += 1;
    return { accessToken: `at-${s.tokens.sealed}`, refreshToken: undefined, idToken: undefined };
  }, 2);
  const of = (id: string, sealed: string): Session =>
    ({
      id,
      tokens: { sealed, accessTokenExpiresAt: undefined, idTokenExpiresAt: undefined, refreshable: false },
    }) as unknown as Session;
  assert.equal((await cache.tokensOf(of('a', 's1')))?.accessToken, 'at-s1');
  await cache.tokensOf(of('a', 's1'));
  assert.equal(opens, 1);
  assert.equal((await cache.tokensOf(of('a', 's2')))?.accessToken, 'at-s2');
  assert.equal(opens, 2);
  cache.invalidate('a');
  await cache.tokensOf(of('a', 's2'));
  assert.equal(opens, 3);
  await cache.tokensOf(of('b', 'x'));
  await cache.tokensOf(of('c', 'x'));
  assert.equal(cache.size, 2);
  cache.clear();
  assert.equal(cache.size, 0);
  const failing = new SessionTokenCache(() => Promise.reject(new Error('bad key')));
  assert.equal(await failing.tokensOf(of('a', 's')), undefined, 'tokens that do not open count as none');
  const throwing = new SessionTokenCache(() => {
    throw new Error('no config installed yet');
  });
  assert.equal(await throwing.tokensOf(of('a', 's')), undefined, 'an open that throws counts as none');
});

// Decision tokens (authorize/fast-path/decision-token.ts): an ES256 JWT signed with the decision key that
// names the host, the session and the routes it was allowed on; verifiable with the decision key's
// public JWK (what Envoy's jwt_authn gets), not with the identity signing key's; never larger than
// MAX_DECISION_TOKEN_BYTES, leaving out the last routes rather than growing past it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeJwt, decodeProtectedHeader, importJWK, jwtVerify, SignJWT } from 'jose';
import {
  MAX_DECISION_TOKEN_BYTES,
  mintDecisionToken,
} from '../../../../src/authorize/fast-path/decision-token.js';
import { DECISION_TOKEN_ISSUER, DECISION_TOKEN_TYPE } from '../../../../src/contract/fast-path.js';
import { deriveDecisionKey, deriveSigningKey } from '../../../../src/keys/signing-key.js';

const SECRET = Buffer.alloc(32, 3);
const key = deriveDecisionKey(SECRET);
const NOW_MS = 1_800_000_000_000;
/** Two minutes, and a session that lasts far longer. */
const LIFE = { lifetimeMs: 120_000, sessionExpiresAtMs: NOW_MS + 3_600_000 };
const routeName = (i: number): string => `${i.toString(16).padStart(16, '0')}.${'ab'.repeat(8)}`;

test('the token names host, session and routes; it verifies with the decision key only', async () => {
  const minted = await mintDecisionToken(key, {
    host: 'app.example.com',
    sid: 'session-1',
    routes: [routeName(1), routeName(2)],
    nowMs: NOW_MS,
    ...LIFE,
  });
  assert.ok(minted);
  assert.deepEqual(minted.routes, [routeName(1), routeName(2)]);
  assert.equal(decodeProtectedHeader(minted.token).typ, DECISION_TOKEN_TYPE);
  const { payload } = await jwtVerify(minted.token, await importJWK(key.publicJwk, 'ES256'), {
    issuer: DECISION_TOKEN_ISSUER,
    audience: 'app.example.com',
    currentDate: new Date(NOW_MS),
  });
  assert.equal(payload.sid, 'session-1');
  assert.deepEqual(payload.r, [routeName(1), routeName(2)]);
  assert.equal(payload.exp, NOW_MS / 1000 + 120);
  assert.equal(payload.v, NOW_MS, 'minted at, in ms');
  assert.equal(payload.ja, undefined);
  assert.equal(payload.h, undefined);
  assert.equal(minted.mintedMs, NOW_MS);
  assert.equal(minted.exp, NOW_MS / 1000 + 120);
  const identityKey = await importJWK(deriveSigningKey(SECRET).publicJwk, 'ES256');
  await assert.rejects(jwtVerify(minted.token, identityKey), 'the identity key does not verify it');
});

test('a host with many routes: the token stays within its bound and keeps the first routes', async () => {
  const routes = Array.from({ length: 500 }, (_, i) => routeName(i));
  const minted = await mintDecisionToken(key, {
    host: 'many.example.com',
    sid: 'session-2',
    routes,
    nowMs: NOW_MS,
    ...LIFE,
  });
  assert.ok(minted);
  assert.ok(minted.token.length <= MAX_DECISION_TOKEN_BYTES, `${minted.token.length} bytes`);
  assert.ok(minted.routes.length > 50 && minted.routes.length < 500, `${minted.routes.length} routes`);
  assert.deepEqual(minted.routes, routes.slice(0, minted.routes.length), 'a prefix, in order');
  const oneMore = await mintDecisionToken(key, {
    host: 'many.example.com',
    sid: 'session-2',
    routes: routes.slice(0, minted.routes.length + 1),
    nowMs: NOW_MS,
    ...LIFE,
  });
  assert.equal(oneMore?.routes.length, minted.routes.length, 'one more route does not fit');
});

test('no token when not even one route fits', async () => {
  const minted = await mintDecisionToken(key, {
    host: 'app.example.com',
    sid: 'x'.repeat(MAX_DECISION_TOKEN_BYTES),
    routes: [routeName(1)],
    nowMs: NOW_MS,
    ...LIFE,
  });
  assert.equal(minted, undefined);
});

/** An identity assertion stand-in expiring at `exp` (only its claims are read: decodeJwt). */
async function assertionExpiring(exp: number, padding = ''): Promise<string> {
  return new SignJWT({ aud: 'app.example.com', padding })
    .setProtectedHeader({ alg: 'ES256' })
    .setExpirationTime(exp)
    .sign(key.privateKey);
}

test('the assertion and claim headers ride along; exp never passes the assertion or the session', async () => {
  const assertion = await assertionExpiring(NOW_MS / 1000 + 70);
  const minted = await mintDecisionToken(key, {
    host: 'app.example.com',
    sid: 'session-3',
    routes: [routeName(1)],
    nowMs: NOW_MS,
    ...LIFE,
    assertion,
    headers: { c0: 'eng', c1: 'a,b' },
  });
  assert.ok(minted);
  const payload = decodeJwt(minted.token);
  assert.equal(payload.ja, assertion);
  assert.deepEqual(payload.h, { c0: 'eng', c1: 'a,b' });
  assert.equal(payload.exp, NOW_MS / 1000 + 70, 'the assertion ends first');

  const endingSession = await mintDecisionToken(key, {
    host: 'app.example.com',
    sid: 'session-3',
    routes: [routeName(1)],
    nowMs: NOW_MS,
    lifetimeMs: 120_000,
    sessionExpiresAtMs: NOW_MS + 30_500,
    assertion,
    headers: {},
  });
  assert.ok(endingSession);
  assert.equal(
    decodeJwt(endingSession.token).exp,
    NOW_MS / 1000 + 30,
    'the session ends first (rounded down)',
  );
  assert.equal(decodeJwt(endingSession.token).h, undefined, 'no empty h');

  const spent = await mintDecisionToken(key, {
    host: 'app.example.com',
    sid: 'session-3',
    routes: [routeName(1)],
    nowMs: NOW_MS,
    lifetimeMs: 120_000,
    sessionExpiresAtMs: NOW_MS + 500,
  });
  assert.equal(spent, undefined, 'a token that would expire within its first second is not minted');
});

test('the assertion counts toward the bound: fewer routes beside it, none when it alone is too large', async () => {
  const routes = Array.from({ length: 500 }, (_, i) => routeName(i));
  const grant = { host: 'app.example.com', sid: 'session-4', routes, nowMs: NOW_MS, ...LIFE };
  const without = await mintDecisionToken(key, grant);
  const withAssertion = await mintDecisionToken(key, {
    ...grant,
    assertion: await assertionExpiring(NOW_MS / 1000 + 300, 'p'.repeat(1000)),
  });
  assert.ok(without && withAssertion);
  assert.ok(withAssertion.token.length <= MAX_DECISION_TOKEN_BYTES);
  assert.ok(withAssertion.routes.length < without.routes.length, "the assertion takes routes' room");
  const huge = await mintDecisionToken(key, {
    ...grant,
    assertion: await assertionExpiring(NOW_MS / 1000 + 300, 'p'.repeat(MAX_DECISION_TOKEN_BYTES)),
  });
  assert.equal(huge, undefined);
});

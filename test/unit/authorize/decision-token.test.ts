// Decision tokens (authorize/decision-token.ts): an ES256 JWT signed with the decision key that
// names the host, the session and the routes it was allowed on; verifiable with the decision key's
// public JWK (what Envoy's jwt_authn gets), not with the identity signing key's; never larger than
// MAX_DECISION_TOKEN_BYTES, leaving out the last routes rather than growing past it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importJWK, jwtVerify, decodeProtectedHeader } from 'jose';
import { MAX_DECISION_TOKEN_BYTES, mintDecisionToken } from '../../../src/authorize/decision-token.js';
import { DECISION_TOKEN_ISSUER, DECISION_TOKEN_TYPE } from '../../../src/contract/fast-path.js';
import { deriveDecisionKey, deriveSigningKey } from '../../../src/keys/signing-key.js';

const SECRET = Buffer.alloc(32, 3);
const key = deriveDecisionKey(SECRET);
const NOW_MS = 1_800_000_000_000;
const routeName = (i: number): string => `${i.toString(16).padStart(16, '0')}.${'ab'.repeat(8)}`;

test('the token names host, session and routes; it verifies with the decision key only', async () => {
  const minted = await mintDecisionToken(key, {
    host: 'app.example.com',
    sessionId: 'session-1',
    routes: [routeName(1), routeName(2)],
    nowMs: NOW_MS,
    lifetimeS: 120,
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
  const identityKey = await importJWK(deriveSigningKey(SECRET).publicJwk, 'ES256');
  await assert.rejects(jwtVerify(minted.token, identityKey), 'the identity key does not verify it');
});

test('a host with many routes: the token stays within its bound and keeps the first routes', async () => {
  const routes = Array.from({ length: 500 }, (_, i) => routeName(i));
  const minted = await mintDecisionToken(key, {
    host: 'many.example.com',
    sessionId: 'session-2',
    routes,
    nowMs: NOW_MS,
    lifetimeS: 120,
  });
  assert.ok(minted);
  assert.ok(minted.token.length <= MAX_DECISION_TOKEN_BYTES, `${minted.token.length} bytes`);
  assert.ok(minted.routes.length > 50 && minted.routes.length < 500, `${minted.routes.length} routes`);
  assert.deepEqual(minted.routes, routes.slice(0, minted.routes.length), 'a prefix, in order');
  const oneMore = await mintDecisionToken(key, {
    host: 'many.example.com',
    sessionId: 'session-2',
    routes: routes.slice(0, minted.routes.length + 1),
    nowMs: NOW_MS,
    lifetimeS: 120,
  });
  assert.equal(oneMore?.routes.length, minted.routes.length, 'one more route does not fit');
});

test('no token when not even one route fits', async () => {
  const minted = await mintDecisionToken(key, {
    host: 'app.example.com',
    sessionId: 'x'.repeat(MAX_DECISION_TOKEN_BYTES),
    routes: [routeName(1)],
    nowMs: NOW_MS,
    lifetimeS: 120,
  });
  assert.equal(minted, undefined);
});

// Mint on allow (issue 35, docs/fast-path.md): an allow of a replayable route for a session from
// the session cookie sets the decision-token cookie, and nothing else does. The token verifies
// with the decision key, names the host's routes this session is allowed on (the requested one
// first), carries exactly the assertion and claim headers the slow path sets, never outlives the
// assertion or the session, and is reused from the minter's cache until half its life is spent.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSetCookie } from 'cookie';
import { decodeJwt, importJWK, jwtVerify, type JWTPayload } from 'jose';
import type { Decision } from '../../../../src/authorize/decision.js';
import { ASSERTION_HEADER } from '../../../../src/contract/authz.js';
import {
  DECISION_TOKEN_ISSUER,
  decisionCookieName,
  decisionSessionId,
} from '../../../../src/contract/fast-path.js';
import { decisionNameOf, mintFixture, type MintFixture } from '../../../support/mint-fixture.js';

type Allow = Extract<Decision, { kind: 'allow' }>;

async function allowOf(decision: Decision | Promise<Decision>): Promise<Allow> {
  const answered = await decision;
  assert.equal(answered.kind, 'allow', JSON.stringify(answered.reasons));
  return answered as Allow;
}

/** The decision-token Set-Cookie of an allow, if any. */
function setCookieOf(decision: Allow): string | undefined {
  const cookies = (decision.responseHeaders ?? []).filter(([name]) => name === 'set-cookie');
  assert.ok(cookies.length <= 1, 'at most one Set-Cookie');
  return cookies[0]?.[1];
}

/** The token of an allow's Set-Cookie, unverified. */
function tokenOf(decision: Allow): string {
  const value = parseSetCookie(setCookieOf(decision) ?? '').value;
  assert.ok(value, 'a decision-token cookie is set');
  return value;
}

/** The token of an allow's Set-Cookie, verified with the decision key's public JWK (Envoy's view). */
async function verifiedToken(fixture: MintFixture, decision: Allow): Promise<JWTPayload> {
  const { payload } = await jwtVerify(
    tokenOf(decision),
    await importJWK(fixture.keys.decisionKey.publicJwk, 'ES256'),
    {
      issuer: DECISION_TOKEN_ISSUER,
      audience: 'app.test',
      currentDate: new Date(fixture.clock.now),
    },
  );
  return payload;
}

test('an allow of a replayable route sets the token cookie: host-only, HttpOnly, Secure, Lax, Max-Age its life', async () => {
  const fixture = mintFixture();
  await fixture.addSession('ada');
  const decision = await allowOf(fixture.authorize(fixture.ask('any', 'ada')));
  const cookie = parseSetCookie(setCookieOf(decision) ?? '');
  assert.equal(cookie.name, decisionCookieName('_portcullis'));
  assert.equal(cookie.path, '/');
  assert.equal(cookie.maxAge, 120);
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.secure, true);
  assert.equal(cookie.sameSite, 'lax');
  assert.equal(cookie.domain, undefined, 'host-only');
  const payload = await verifiedToken(fixture, decision);
  assert.equal(payload.sid, decisionSessionId('ada'));
  assert.equal(payload.v, fixture.clock.now);
  assert.equal(payload.exp, Math.floor((fixture.clock.now + 120_000) / 1000));
  assert.ok(
    decision.setHeaders.every(([name]) => name !== 'set-cookie'),
    'the cookie goes to the client, not the upstream',
  );
});

test('a plain-HTTP listener: the token cookie is not Secure, like the session cookie', async () => {
  const fixture = mintFixture({ insecure: true });
  await fixture.addSession('ada');
  const decision = await allowOf(fixture.authorize({ ...fixture.ask('any', 'ada'), scheme: 'http' }));
  assert.equal(parseSetCookie(setCookieOf(decision) ?? '').secure, undefined);
});

test('the token lists the allowed replayable routes of the host only, the requested one first', async () => {
  const fixture = mintFixture();
  const { ir } = fixture;
  await fixture.addSession('ada');
  await fixture.addSession('bob');
  const forAda = await verifiedToken(fixture, await allowOf(fixture.authorize(fixture.ask('team', 'ada'))));
  assert.deepEqual(forAda.r, [
    decisionNameOf(ir, 'team'),
    decisionNameOf(ir, 'any'),
    decisionNameOf(ir, 'ada'),
  ]);
  const forBob = await verifiedToken(fixture, await allowOf(fixture.authorize(fixture.ask('any', 'bob'))));
  assert.deepEqual(
    forBob.r,
    [decisionNameOf(ir, 'any'), decisionNameOf(ir, 'team')],
    'not the route whose policy denies Bob, nor another host, nor a route that is never replayed',
  );
});

test('ja is the assertion the slow path sets for the host, h its claim headers; exp never passes either', async () => {
  const fixture = mintFixture();
  await fixture.addSession('ada');
  const slow = await allowOf(fixture.authorize(fixture.ask('team', 'ada')));
  const payload = await verifiedToken(fixture, slow);
  const assertion = slow.setHeaders.find(([name]) => name === ASSERTION_HEADER)?.[1];
  assert.ok(assertion);
  assert.equal(payload.ja, assertion);
  const header = (name: string): string | undefined => slow.setHeaders.find(([key]) => key === name)?.[1];
  // Sorted lower-case claim header names: x-a-team (c0), x-dept (c1), x-evil (c2, CR/LF: never sent).
  assert.deepEqual(payload.h, { c0: header('x-a-team'), c1: header('x-dept') });
  assert.deepEqual(payload.h, { c0: 'red,blue', c1: 'eng' });
  assert.equal(header('x-evil'), undefined);
  assert.ok((payload.exp ?? Infinity) <= (decodeJwt(assertion).exp ?? 0));

  // 200 s on, the cached assertion has 100 s left: the new token ends with it, not in 120 s.
  fixture.clock.now += 200_000;
  const later = await allowOf(fixture.authorize(fixture.ask('any', 'ada')));
  const laterPayload = await verifiedToken(fixture, later);
  assert.equal(
    laterPayload.ja,
    assertion,
    'a route without identity headers: the sibling needs the assertion',
  );
  assert.equal(laterPayload.exp, decodeJwt(assertion).exp);
  assert.equal(parseSetCookie(setCookieOf(later) ?? '').maxAge, 100);
});

test('no listed route passes identity headers: no ja, no h', async () => {
  const fixture = mintFixture();
  await fixture.addSession('ada');
  const decision = await allowOf(fixture.authorize(fixture.ask('other', 'ada')));
  const payload = decodeJwt(tokenOf(decision));
  assert.deepEqual(payload.r, [decisionNameOf(fixture.ir, 'other')]);
  assert.equal(payload.ja, undefined);
  assert.equal(payload.h, undefined);
});

test('the token ends with the session', async () => {
  const fixture = mintFixture();
  await fixture.addSession('ada', { expiresAt: fixture.clock.now + 30_500 });
  const payload = await verifiedToken(fixture, await allowOf(fixture.authorize(fixture.ask('any', 'ada'))));
  assert.equal(payload.exp, Math.floor((fixture.clock.now + 30_500) / 1000));
});

test('no cookie: bearer clients, public and non-replayable routes, denies, another IdP, the fast path off', async () => {
  const fixture = mintFixture();
  await fixture.addSession('ada');
  await fixture.addSession('bob');
  await fixture.addSession('eve', { idpId: 'another-client' });
  const handle = fixture.keys.handles.issue('ada');
  const bearer = await allowOf(
    fixture.authorize({
      ...fixture.ask('any', undefined),
      headers: { authorization: `Portcullis ${handle}` },
    }),
  );
  assert.equal(bearer.responseHeaders, undefined, 'Authorization: Portcullis keeps the slow path');
  const both = await allowOf(
    fixture.authorize(fixture.ask('any', 'ada', { authorization: `Portcullis ${handle}` })),
  );
  assert.equal(both.responseHeaders, undefined, 'a bearer with the cookie too: still an API client');
  const publicRoute = await allowOf(fixture.authorize(fixture.ask('public', 'ada')));
  assert.equal(publicRoute.responseHeaders, undefined);
  const method = await allowOf(fixture.authorize(fixture.ask('method', 'ada')));
  assert.equal(method.responseHeaders, undefined, 'a route that names http_method is never replayed');
  const denied = await fixture.authorize(fixture.ask('ada', 'bob'));
  assert.equal(denied.kind, 'deny');
  const otherIdp = await fixture.authorize(fixture.ask('any', 'eve'));
  assert.equal(otherIdp.kind, 'deny', 'a session of another client counts as none');

  const off = mintFixture({ lifetime: '0s' });
  await off.addSession('ada');
  const offAllow = await allowOf(off.authorize(off.ask('any', 'ada')));
  assert.equal(offAllow.responseHeaders, undefined, 'decision_token_lifetime 0s: no token');
  assert.equal(off.minter.size, 0);
});

test('revoked: nothing is minted until the revocation time has passed, and an older token is not reused', async () => {
  const fixture = mintFixture();
  await fixture.addSession('ada');
  const first = await verifiedToken(fixture, await allowOf(fixture.authorize(fixture.ask('any', 'ada'))));
  fixture.revoked.set(decisionSessionId('ada'), fixture.clock.now + 5_000);
  fixture.clock.now += 1_000;
  const during = await allowOf(fixture.authorize(fixture.ask('any', 'ada')));
  assert.equal(during.responseHeaders, undefined, 'Envoy would refuse it');
  fixture.clock.now += 4_000;
  assert.equal(
    (await allowOf(fixture.authorize(fixture.ask('any', 'ada')))).responseHeaders,
    undefined,
    'at it',
  );
  fixture.clock.now += 1;
  const after = await verifiedToken(fixture, await allowOf(fixture.authorize(fixture.ask('any', 'ada'))));
  assert.ok((after.v as number) > (first.v as number), 'a new token, minted after the revocation');
  assert.ok((after.v as number) > (fixture.revoked.get(decisionSessionId('ada')) ?? Infinity));
});

test('a cached token answers synchronously until half its life is spent; after it, or an invalidation, a new one is minted', async () => {
  const fixture = mintFixture();
  await fixture.addSession('ada');
  const first = await allowOf(fixture.authorize(fixture.ask('team', 'ada')));
  const token = parseSetCookie(setCookieOf(first) ?? '').value;
  fixture.clock.now += 30_000;
  const again = fixture.authorize(fixture.ask('any', 'ada'));
  assert.ok(!(again instanceof Promise), 'cached token and assertion: no promise hop');
  const cached = await allowOf(again);
  assert.equal(parseSetCookie(setCookieOf(cached) ?? '').value, token, 'the same token, any listed route');
  assert.equal(parseSetCookie(setCookieOf(cached) ?? '').maxAge, 90, 'Max-Age counts down');

  fixture.clock.now += 31_000;
  const renewed = fixture.authorize(fixture.ask('any', 'ada'));
  assert.ok(renewed instanceof Promise, 'past half its life: minted anew');
  assert.notEqual(parseSetCookie(setCookieOf(await allowOf(renewed)) ?? '').value, token);

  fixture.minter.invalidate('ada');
  assert.equal(fixture.minter.size, 0);
  assert.ok(
    fixture.authorize(fixture.ask('any', 'ada')) instanceof Promise,
    'after invalidation: minted anew',
  );
});

test('a route the cached token does not name is minted for, not answered with that token', async () => {
  const fixture = mintFixture();
  await fixture.addSession('ada');
  await allowOf(fixture.authorize(fixture.ask('any', 'ada')));
  const minted = fixture.minter.size;
  const other = await allowOf(fixture.authorize({ ...fixture.ask('other', 'ada') }));
  const value = tokenOf(other);
  assert.deepEqual(decodeJwt(value).r, [decisionNameOf(fixture.ir, 'other')]);
  assert.equal(decodeJwt(value).aud, 'other.test', 'one token per host');
  assert.equal(fixture.minter.size, minted + 1);
});

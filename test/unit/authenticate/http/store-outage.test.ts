// The authenticate service with its session store down (Redis or a remote databroker unreachable):
// every endpoint that needs the store answers 503 "try again" with the request id, logs one warn
// line with the error code and no stack, never clears the session cookie, and never sets a cookie
// for a session that was not stored. Requests go through the router, as the HTTP server sends them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RecordReplayGuard } from '../../../../src/authenticate/flow/replay-guard.js';
import { dispatch } from '../../../../src/authenticate/http/router.js';
import type { HandlerContext, OwnResponse } from '../../../../src/authenticate/http/types.js';
import { signOutToken } from '../../../../src/authenticate/pages/sign-out-token.js';
import type { Session } from '../../../../src/session/session.js';
import { storedSessionCount } from '../../../support/session-store.js';
import { failingSessions, unreachableBackend } from '../failing-store.js';
import {
  AUTH_URL,
  CALLBACK_PATH,
  IDP_A,
  harness,
  location,
  ownRequest,
  setCookies,
  type Harness,
} from './harness.js';

const ORIGINAL = 'https://app.test:8443/docs/page?x=1';
const SIGN_IN = `${AUTH_URL}/.portcullis/sign_in?portcullis_redirect_uri=${encodeURIComponent(ORIGINAL)}`;

/** A stored, live session of IdP A and its handle. */
async function signedIn(h: Harness): Promise<{ session: Session; handle: string }> {
  const session: Session = {
    id: 'session-1',
    userId: 'alice',
    email: 'alice@example.com',
    emailVerified: true,
    name: 'Alice',
    groups: [],
    claims: { sub: 'alice' },
    issuedAt: h.clock.now,
    expiresAt: h.clock.now + 3_600_000,
    idpId: IDP_A,
  };
  await h.sessions.put(session);
  return { session, handle: h.handles.issue(session.id) };
}

/** The context of `h` with its session store failing as chosen. */
function withOutage(h: Harness, calls: Parameters<typeof failingSessions>[1]): HandlerContext {
  return { ...h.context, sessions: failingSessions(h.sessions, calls) };
}

/** The 503 every outage answers: request id, retry link, one warn line with the code, no cookie change. */
function assertUnavailable(
  h: Harness,
  response: OwnResponse,
  retry: string | undefined,
  title: RegExp,
): void {
  assert.equal(response.status, 503, response.body);
  assert.match(response.body, title);
  assert.ok(response.body.includes('req-1'), 'the request id is on the page');
  if (retry !== undefined)
    assert.ok(response.body.includes(`href="${retry.replace(/&/g, '&amp;')}"`), 'retry link');
  assert.ok(response.headers.some(([name, value]) => name === 'retry-after' && value === '5'));
  assert.ok(!setCookies(response).has('_portcullis'), 'the session cookie is neither set nor cleared');
  const lines = h.logger.records.filter((record) => record.msg === 'session store unavailable; answered 503');
  assert.equal(lines.length, 1, 'logged once');
  assert.equal(lines[0]?.level, 'warn');
  assert.equal((lines[0]?.obj as { code?: string }).code, 'STORE_UNAVAILABLE');
  assert.ok(!JSON.stringify(h.logger.records).includes('    at '), 'no stack trace');
  assert.ok(!h.logger.records.some((record) => record.level === 'error'), 'not an internal error');
}

test('sign-in with a session cookie while the store is down: 503 with a retry link, cookie kept', async () => {
  const h = harness();
  const { handle } = await signedIn(h);
  const response = await dispatch(
    ownRequest(SIGN_IN, { sessionHandle: handle }),
    withOutage(h, { get: true }),
  );
  assertUnavailable(h, response, SIGN_IN, /Sign-in is temporarily unavailable/);
  assert.equal(h.providers.get(IDP_A)?.issued.length, 0, 'no sign-in flow started behind an outage');
});

/** Starts a sign-in on `h` and returns the callback URL (code `good-code`) and its flow cookie. */
async function started(h: Harness): Promise<{ url: string; cookies: Record<string, string> }> {
  const response = await dispatch(ownRequest(SIGN_IN), h.context);
  const state = location(response).searchParams.get('state') ?? '';
  const [flow] = [...setCookies(response).values()];
  assert.ok(flow?.value !== undefined);
  const url = new URL(CALLBACK_PATH, AUTH_URL);
  url.searchParams.set('state', state);
  url.searchParams.set('code', 'good-code');
  return { url: url.href, cookies: { [flow.name]: flow.value } };
}

test('callback when single use cannot be checked: 503, the IdP is not asked, no session cookie', async () => {
  const h = harness();
  const { url, cookies } = await started(h);
  const context = { ...h.context, replay: new RecordReplayGuard(unreachableBackend(), () => h.clock.now) };
  const response = await dispatch(ownRequest(url, { cookies }), context);
  assertUnavailable(h, response, ORIGINAL, /Sign-in is temporarily unavailable/);
  assert.equal(h.providers.get(IDP_A)?.exchanges.length, 0);
  assert.equal([...setCookies(response).values()][0]?.maxAge, 0, 'only the flow cookie is cleared');
});

test('callback when the session cannot be stored: 503, no session cookie and no handoff', async () => {
  const h = harness();
  const { url, cookies } = await started(h);
  const context = withOutage(h, { put: true });
  const response = await dispatch(ownRequest(url, { cookies }), context);
  assertUnavailable(h, response, ORIGINAL, /Sign-in is temporarily unavailable/);
  assert.equal(h.providers.get(IDP_A)?.exchanges.length, 1, 'the code was exchanged');
  assert.ok(!response.body.includes('/.portcullis/callback'), 'no handoff to a session that was not stored');
  assert.equal(await storedSessionCount(h.sessions), 0, 'nothing stored');
  assert.ok(!h.logger.records.some((record) => record.msg === 'signed in'));
});

test('handoff when the store is down: 503 with a link back to the original URL, no cookie', async () => {
  const h = harness();
  const { url, cookies } = await started(h);
  const handedOff = location(await dispatch(ownRequest(url, { cookies }), h.context));
  const response = await dispatch(ownRequest(handedOff.href), withOutage(h, { get: true }));
  assertUnavailable(h, response, ORIGINAL, /Sign-in is temporarily unavailable/);
});

test('sign-out that cannot reach the store: 503 "could not complete", cookie kept, session kept, IdP not told', async () => {
  for (const method of ['GET', 'POST'] as const) {
    const h = harness();
    const { session, handle } = await signedIn(h);
    const token = signOutToken(h.settings.sharedSecret, session.id);
    const url = `https://app.test:8443/.portcullis/sign_out?portcullis_csrf=${token}`;
    const read = await dispatch(
      ownRequest(url, { method, sessionHandle: handle }),
      withOutage(h, { get: true }),
    );
    assertUnavailable(h, read, '/.portcullis/sign_out', /Sign-out could not complete/);
    assert.match(read.body, /still active/);
  }
  const h = harness();
  const { session, handle } = await signedIn(h);
  const token = signOutToken(h.settings.sharedSecret, session.id);
  const url = `https://app.test:8443/.portcullis/sign_out?portcullis_csrf=${token}`;
  const deleting = await dispatch(
    ownRequest(url, { method: 'POST', sessionHandle: handle }),
    withOutage(h, { delete: true }),
  );
  assertUnavailable(h, deleting, '/.portcullis/sign_out', /Sign-out could not complete/);
  assert.ok(await h.sessions.get(session.id), 'the session is still there');
  assert.ok(!h.logger.records.some((record) => record.msg === 'signed out'));
});

test('the user page and the user JSON with the store down: 503 page and 503 JSON', async () => {
  const h = harness();
  const { handle } = await signedIn(h);
  const page = await dispatch(
    ownRequest('https://app.test:8443/.portcullis/', { sessionHandle: handle }),
    withOutage(h, { get: true }),
  );
  assertUnavailable(h, page, 'https://app.test:8443/.portcullis/', /temporarily unavailable/);
  const j = harness();
  const signed = await signedIn(j);
  const json = await dispatch(
    ownRequest('https://app.test:8443/.portcullis/user', { sessionHandle: signed.handle }),
    withOutage(j, { get: true }),
  );
  assert.equal(json.status, 503);
  assert.equal(json.headers.find(([name]) => name === 'content-type')?.[1], 'application/json');
  const body = JSON.parse(json.body) as { request_id: string; error: string };
  assert.equal(body.request_id, 'req-1');
  assert.match(body.error, /temporarily unavailable/);
  assert.equal(json.setCookies.length, 0);
});

test('without a session handle nothing asks the store: sign-in starts, the user page says signed out', async () => {
  const h = harness();
  const context = withOutage(h, { get: true, put: true, delete: true });
  assert.equal((await dispatch(ownRequest(SIGN_IN), context)).status, 302);
  assert.equal((await dispatch(ownRequest('https://app.test:8443/.portcullis/'), context)).status, 200);
  assert.deepEqual((context.sessions as ReturnType<typeof failingSessions>).calls, []);
});

// The user page and its JSON twin: who the session is, every claim escaped, a labelled sign-out
// button carrying the token; without a session a plain answer, never a redirect.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { userJsonHandler, userPageHandler } from '../../../../src/authenticate/pages/handlers.js';
import { errorResponse } from '../../../../src/authenticate/pages/pages.js';
import { signOutToken } from '../../../../src/authenticate/pages/sign-out-token.js';
import { IDP_ID, fixture, request, storeSession } from './fixture.js';

const PAGE = 'https://app.example.com:8443/.portcullis/';
const JSON_URL = 'https://app.example.com:8443/.portcullis/user';
const EVIL = '<script>alert("x")</script>';

test('the user page shows identity, groups, every claim, the IdP and times, all escaped', async () => {
  const f = fixture();
  const session = await storeSession(f, {
    name: `Ada ${EVIL}`,
    email: `ada+${EVIL}@example.com`,
    userId: `u-${EVIL}`,
    groups: ['admins', EVIL],
    claims: { sub: 'u-1', note: EVIL, nested: { list: [1, EVIL] }, [`${EVIL}key`]: true },
  });
  const response = await userPageHandler(
    request({ url: PAGE, handle: f.handles.issue(session.id) }),
    f.context,
  );
  assert.equal(response.status, 200);
  const headers = new Map(response.headers);
  assert.equal(headers.get('content-type'), 'text/html; charset=utf-8');
  assert.equal(headers.get('cache-control'), 'no-store');
  assert.match(headers.get('content-security-policy') ?? '', /default-src 'none'/);
  const body = response.body;
  assert.doesNotMatch(body, /<script/i, 'no value reaches the page unescaped');
  assert.ok(body.includes('Ada &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'));
  assert.ok(body.includes('&lt;/script&gt;key'), 'claim names are escaped too');
  assert.ok(
    body.includes('{&quot;list&quot;:[1,&quot;&lt;script&gt;alert(\\&quot;x\\&quot;)&lt;/script&gt;&quot;]}'),
    'values JSON-stringified',
  );
  assert.match(body, /<li><code>admins<\/code><\/li>/);
  assert.ok(body.includes(IDP_ID));
  assert.ok(body.includes('2026-11-25T12:00:00.000Z'), 'issued (ISO, UTC)');
  assert.ok(body.includes('2026-11-26T02:00:00.000Z'), 'expires (ISO, UTC)');
  assert.ok(
    body.includes(`value="${signOutToken(f.sharedSecret, session.id)}"`),
    'the sign-out form carries the token',
  );
});

/** A provider the fixture's sessions were made by (IDP_ID), unnamed. */
const PROVIDER = {
  id: IDP_ID,
  provider: 'oidc' as const,
  providerUrl: new URL('https://partner-idp.example.com/realm'),
  clientId: 'client',
  clientSecret: 'secret',
  scopes: undefined,
  requestParams: {},
};

test("the user page names the session's provider and its issuer URL; the default when unnamed", async () => {
  const config = PROVIDER;
  const page = async (named: Record<string, unknown>): Promise<string> => {
    const f = fixture({ providers: new Map([[IDP_ID, { ...config, ...named }]]) });
    const session = await storeSession(f);
    return (await userPageHandler(request({ url: PAGE, handle: f.handles.issue(session.id) }), f.context))
      .body;
  };
  const partner = await page({ name: 'partner' });
  assert.match(partner, /<strong class="idp-name">partner<\/strong>/);
  assert.match(partner, /<code class="idp-url">https:\/\/partner-idp\.example\.com\/realm<\/code>/);
  assert.match(await page({}), /<strong class="idp-name">default<\/strong>/);
  // A provider the config no longer has: only its id.
  const f = fixture();
  const session = await storeSession(f);
  const orphan = await userPageHandler(
    request({ url: PAGE, handle: f.handles.issue(session.id) }),
    f.context,
  );
  assert.doesNotMatch(orphan.body, /idp-name/);
  assert.ok(orphan.body.includes(IDP_ID));
});

test('accessibility basics: lang, one h1, a labelled button, table headers with scope', async () => {
  const f = fixture();
  const session = await storeSession(f);
  const { body } = await userPageHandler(
    request({ url: PAGE, handle: f.handles.issue(session.id) }),
    f.context,
  );
  assert.match(body, /<html lang="en">/);
  assert.equal(body.match(/<h1[ >]/g)?.length, 1);
  assert.match(body, /<h1>Signed in as Ada<\/h1>/);
  assert.match(body, /<button type="submit">Sign out<\/button>/, 'the button has a text label');
  assert.match(body, /<th scope="col">Claim<\/th>/);
  assert.match(body, /<main>/);
});

test('without a valid session: HTML 200 "You are not signed in" linking to /, JSON 401', async () => {
  const f = fixture();
  const session = await storeSession(f);
  await f.sessions.delete(session.id);
  for (const handle of [undefined, 'forged.x', f.handles.issue(session.id)]) {
    const page = await userPageHandler(request({ url: PAGE, ...(handle ? { handle } : {}) }), f.context);
    assert.equal(page.status, 200);
    assert.match(page.body, /<h1>You are not signed in<\/h1>/);
    assert.match(page.body, /<a class="button" href="\/">Sign in<\/a>/);
    assert.equal(new Map(page.headers).get('location'), undefined, 'never a redirect');
    const json = await userJsonHandler(request({ url: JSON_URL, ...(handle ? { handle } : {}) }), f.context);
    assert.equal(json.status, 401);
    assert.deepEqual(JSON.parse(json.body), { error: 'not signed in' });
  }
});

test('the JSON twin carries the same facts', async () => {
  const f = fixture();
  const session = await storeSession(f, { claims: { sub: 'user-1', groups: ['admins'] } });
  const response = await userJsonHandler(
    request({ url: JSON_URL, handle: f.handles.issue(session.id) }),
    f.context,
  );
  assert.equal(response.status, 200);
  assert.equal(new Map(response.headers).get('content-type'), 'application/json');
  assert.deepEqual(JSON.parse(response.body), {
    user_id: 'user-1',
    email: 'ada@example.com',
    name: 'Ada',
    groups: ['admins'],
    claims: { sub: 'user-1', groups: ['admins'] },
    idp_id: IDP_ID,
    idp_name: null,
    idp_url: null,
    issued_at: '2026-11-25T12:00:00.000Z',
    expires_at: '2026-11-26T02:00:00.000Z',
  });
});

test('the JSON twin names the provider and its issuer URL', async () => {
  const f = fixture({
    providers: new Map([[IDP_ID, { ...PROVIDER, name: 'partner' }]]),
  });
  const session = await storeSession(f);
  const response = await userJsonHandler(
    request({ url: JSON_URL, handle: f.handles.issue(session.id) }),
    f.context,
  );
  const body = JSON.parse(response.body) as Record<string, unknown>;
  assert.equal(body.idp_name, 'partner');
  assert.equal(body.idp_url, 'https://partner-idp.example.com/realm');
});

test('an expired session is no session', async () => {
  const f = fixture();
  const session = await storeSession(f, { expiresAt: Date.UTC(2026, 10, 25, 12, 30) });
  f.advance(3600_000);
  const json = await userJsonHandler(
    request({ url: JSON_URL, handle: f.handles.issue(session.id) }),
    f.context,
  );
  assert.equal(json.status, 401);
});

test('errorResponse: status, escaped title and message, request id, optional retry link', () => {
  const response = errorResponse(
    502,
    `IdP <down>`,
    `the IdP said ${EVIL}`,
    'req-"9"',
    'https://app.example.com/x?a=1&b=2',
  );
  assert.equal(response.status, 502);
  assert.equal(new Map(response.headers).get('cache-control'), 'no-store');
  assert.match(response.body, /<title>502 Bad Gateway · Portcullis<\/title>/);
  assert.match(response.body, /<h1>IdP &lt;down&gt;<\/h1>/);
  assert.doesNotMatch(response.body, /<script/);
  assert.match(response.body, /req-&quot;9&quot;/);
  assert.match(
    response.body,
    /<a class="button" href="https:\/\/app.example.com\/x\?a=1&amp;b=2">Try again<\/a>/,
  );
  assert.doesNotMatch(errorResponse(400, 't', 'm', 'r').body, /Try again/);
  assert.doesNotMatch(errorResponse(400, 't', 'm', 'r', 'javascript:alert(1)').body, /Try again|javascript/);
  assert.match(
    errorResponse(400, 't', 'm', 'r', '/.portcullis/sign_in?x=1').body,
    /href="\/.portcullis\/sign_in\?x=1"/,
  );
});

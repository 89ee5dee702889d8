// Credentials never reach an upstream, whatever the Host looks like (issue 23, item 3), through a
// real Envoy configured by Portcullis: every host spelling (case, trailing dot, port, none) x public
// and protected routes x HTTP/1.1 and HTTP/2 (h2c), under per-host and single route tables. The
// upstream must never see the session cookie (any spelling the authorizer accepts), an
// `Authorization: Portcullis` header or a client-sent `X-Portcullis-*` header; a protected upstream
// still gets the assertion and claim headers Portcullis sets. The shared Cookie vectors
// (test/support/cookie-vectors.ts) run through the real strip here and against the authorizer's
// codec in test/unit/session/cookie-vectors.test.ts; the decision cookie's vectors (the fast path is on
// by default) run through the strip here too.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type ClientHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { parseCookie } from 'cookie';
import { startPortcullis, type TestPortcullis, adaSession } from '../support/portcullis.js';
import { waitFor } from '../support/wait.js';
import { http1Fields, http2Fields, type Fields } from '../support/field-requests.js';
import {
  COOKIE_VECTORS,
  DECISION_COOKIE_VECTORS,
  DECISION_TOKEN,
  HANDLE,
  SESSION_COOKIE_NAME,
} from '../support/cookie-vectors.js';
import { splitSessionCookie } from '../../src/session/cookie.js';

const PUBLIC_HOST = 'pub.example.com';
const PROTECTED_HOST = 'app.example.com';

/** What the upstream saw of one request: every header field, as sent (`headersDistinct`). */
interface Seen {
  readonly headers: Record<string, string[]>;
}

let upstream: Server;
let upstreamUrl: string;
let portcullis: TestPortcullis;
let handle: string;

const ada = adaSession({ claims: { department: 'research', email: 'ada@example.com' } });

function routes(extra: Record<string, unknown>[] = []): Record<string, unknown>[] {
  return [
    { from: `https://${PUBLIC_HOST}`, to: upstreamUrl, allow_public_unauthenticated_access: true },
    {
      from: `https://${PROTECTED_HOST}`,
      to: upstreamUrl,
      allowed_users: ['ada@example.com'],
      pass_identity_headers: true,
    },
    ...extra,
  ];
}

before(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    const body = JSON.stringify({ headers: req.headersDistinct });
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  portcullis = await startPortcullis({ jwt_claims_headers: ['department'], routes: routes() });
  await portcullis.running.sessions.put(ada);
  handle = portcullis.running.authorize.handles().issue(ada.id);
});

after(async () => {
  await portcullis?.stop();
  upstream?.closeAllConnections();
  await new Promise((resolve) => upstream?.close(resolve));
});

interface Answer {
  readonly status: number;
  /** What the upstream saw, when the request reached it. */
  readonly seen: Seen | undefined;
}

function answer(status: number, body: string): Answer {
  const parsed = status === 200 ? (JSON.parse(body) as Partial<Seen>) : undefined;
  return { status, seen: parsed?.headers === undefined ? undefined : (parsed as Seen) };
}

/** HTTP/1.1 to Envoy's listener; `host` undefined sends no Host header. */
async function http1(host: string | undefined, fields: Fields): Promise<Answer> {
  const { status, body } = await http1Fields(portcullis.proxyPort, host, '/', fields);
  return answer(status, body);
}

/** HTTP/2 with prior knowledge (h2c) to Envoy's listener; each Cookie field is sent as its own crumb. */
async function http2(session: ClientHttp2Session, authority: string, fields: Fields): Promise<Answer> {
  const { status, body } = await http2Fields(session, authority, '/', fields);
  return answer(status, body);
}

/** Credentials in the spellings the authorizer accepts, and client-forged identity headers. */
function attempts(): { name: string; fields: Fields }[] {
  const forged: Fields = [
    ['X-Portcullis-Jwt-Assertion', 'forged'],
    ['x-portcullis-claim-department', 'forged'],
    ['X-Portcullis-Anything', 'forged'],
  ];
  return [
    { name: 'session cookie', fields: [['cookie', `theme=dark; _portcullis=${handle}`], ...forged] },
    { name: 'spaced session cookie', fields: [['cookie', `theme=dark; _portcullis =${handle}`], ...forged] },
    {
      name: 'split, tabbed',
      fields: [['cookie', `\t_portcullis\t=${handle}`], ['cookie', 'theme=dark'], ...forged],
    },
    {
      name: 'Authorization: Portcullis',
      fields: [['cookie', 'theme=dark'], ['authorization', `Portcullis ${handle}`], ...forged],
    },
    {
      name: 'cookie and a lower-case scheme',
      fields: [
        ['cookie', `_portcullis=${handle}; theme=dark`],
        ['authorization', `portcullis ${handle}`],
        ...forged,
      ],
    },
  ];
}

/** The upstream saw no credential and no client-sent identity header; `protectedRoute` adds Portcullis's own. */
function assertClean(seen: Seen, protectedRoute: boolean, label: string): void {
  const cookies = seen.headers.cookie ?? [];
  for (const field of [...cookies, cookies.join('; ')])
    assert.equal(
      splitSessionCookie(field, SESSION_COOKIE_NAME).hadSession,
      false,
      `${label}: session cookie in ${field}`,
    );
  for (const [name, values] of Object.entries(seen.headers)) {
    for (const value of values)
      assert.ok(!value.includes(handle), `${label}: the handle reached the upstream in ${name}`);
    if (name === 'authorization')
      for (const value of values) assert.doesNotMatch(value, /portcullis/i, `${label}: ${name}: ${value}`);
  }
  assert.deepEqual({ ...parseCookie(cookies.join('; ')) }, { theme: 'dark' }, `${label}: other cookies kept`);
  const identity = Object.keys(seen.headers)
    .filter((name) => name.startsWith('x-portcullis-'))
    .sort();
  if (!protectedRoute) {
    assert.deepEqual(identity, [], `${label}: identity headers on a public route`);
    return;
  }
  assert.deepEqual(identity, ['x-portcullis-claim-department', 'x-portcullis-jwt-assertion'], label);
  assert.deepEqual(
    seen.headers['x-portcullis-claim-department'],
    ['research'],
    `${label}: Portcullis's claim`,
  );
  const assertion = seen.headers['x-portcullis-jwt-assertion'] ?? [];
  assert.equal(assertion.length, 1, label);
  assert.match(assertion[0] as string, /^[\w-]+\.[\w-]+\.[\w-]+$/, `${label}: Portcullis's assertion`);
}

/** `host` spelled every way a client may send it. */
function hostForms(host: string): { name: string; host: string }[] {
  const mixed = host.replace(/(^|\.)(\w)/g, (_, dot: string, letter: string) => dot + letter.toUpperCase());
  return [
    { name: 'lower', host },
    { name: 'UPPER', host: host.toUpperCase() },
    { name: 'Mixed', host: mixed },
    { name: 'trailing dot', host: `${host}.` },
    { name: 'port', host: `${host}:8443` },
    { name: 'UPPER, dot and port', host: `${host.toUpperCase()}.:8443` },
  ];
}

function matrix(mode: string): void {
  for (const [kind, host, protectedRoute] of [
    ['public', PUBLIC_HOST, false],
    ['protected', PROTECTED_HOST, true],
  ] as const) {
    for (const form of hostForms(host)) {
      test(`${mode}: ${kind} route, HTTP/1.1, ${form.name} host (${form.host})`, async () => {
        for (const attempt of attempts()) {
          const { status, seen } = await http1(form.host, attempt.fields);
          assert.equal(status, 200, attempt.name);
          assertClean(seen as Seen, protectedRoute, attempt.name);
        }
      });

      test(`${mode}: ${kind} route, HTTP/2, ${form.name} :authority (${form.host})`, async () => {
        const session = connect(`http://127.0.0.1:${portcullis.proxyPort}`);
        try {
          for (const attempt of attempts()) {
            const { status, seen } = await http2(session, form.host, attempt.fields);
            assert.equal(status, 200, attempt.name);
            assertClean(seen as Seen, protectedRoute, attempt.name);
          }
        } finally {
          session.close();
        }
      });
    }
  }

  test(`${mode}: no Host at all (HTTP/1.1) is refused before any upstream`, async () => {
    for (const attempt of attempts()) {
      const { status, seen } = await http1(undefined, attempt.fields);
      if (seen !== undefined) assertClean(seen, false, `no host ${attempt.name}`);
      assert.equal(status, 400, attempt.name);
    }
  });
}

describe('per-host route tables', () => {
  matrix('per-host');

  test('the shared Cookie vectors through the strip, on a public route reached by an upper-case host', async () => {
    const session = connect(`http://127.0.0.1:${portcullis.proxyPort}`);
    try {
      for (const vector of COOKIE_VECTORS) {
        const sent = vector.sent.map((field) => ['cookie', field] as const);
        const expected = vector.forwarded === undefined ? [] : [vector.forwarded];
        const one = await http1(PUBLIC_HOST.toUpperCase(), sent);
        assert.equal(one.status, 200, vector.name);
        assert.deepEqual(one.seen?.headers.cookie ?? [], expected, `HTTP/1.1: ${vector.name}`);
        const two = await http2(session, PUBLIC_HOST.toUpperCase(), sent);
        assert.equal(two.status, 200, vector.name);
        assert.deepEqual(two.seen?.headers.cookie ?? [], expected, `HTTP/2: ${vector.name}`);
      }
    } finally {
      session.close();
    }
  });

  test('the decision cookie vectors through the strip (the fast path is on by default)', async () => {
    const session = connect(`http://127.0.0.1:${portcullis.proxyPort}`);
    try {
      for (const vector of DECISION_COOKIE_VECTORS) {
        const sent = vector.sent.map((field) => ['cookie', field] as const);
        const expected = vector.forwarded === undefined ? [] : [vector.forwarded];
        const one = await http1(PUBLIC_HOST.toUpperCase(), sent);
        assert.equal(one.status, 200, vector.name);
        assert.deepEqual(one.seen?.headers.cookie ?? [], expected, `HTTP/1.1: ${vector.name}`);
        const two = await http2(session, PUBLIC_HOST.toUpperCase(), sent);
        assert.equal(two.status, 200, vector.name);
        assert.deepEqual(two.seen?.headers.cookie ?? [], expected, `HTTP/2: ${vector.name}`);
      }
    } finally {
      session.close();
    }
    // On a protected route too, beside a session that opens it.
    const { status, seen } = await http1(PROTECTED_HOST, [
      ['cookie', `_portcullis=${handle}; _portcullis_dt=${DECISION_TOKEN}; theme=dark`],
    ]);
    assert.equal(status, 200);
    assert.deepEqual(seen?.headers.cookie, ['theme=dark']);
  });

  test('the shared Cookie vectors that carry a session open a protected route and reach it without it', async () => {
    for (const vector of COOKIE_VECTORS.filter((entry) => entry.session === HANDLE)) {
      const sent = vector.sent.map((field) => ['cookie', field.replaceAll(HANDLE, handle)] as const);
      const { status, seen } = await http1(PROTECTED_HOST.toUpperCase(), sent);
      // Two different session cookies are refused, never resolved by picking one (issue 33, item 11).
      assert.equal(status, vector.conflicting === true ? 400 : 200, vector.name);
      const forwarded = seen?.headers.cookie ?? [];
      assert.ok(!forwarded.join().includes(handle), vector.name);
      assert.equal(
        splitSessionCookie(forwarded.join('; '), SESSION_COOKIE_NAME).hadSession,
        false,
        vector.name,
      );
    }
  });
});

test("the upstream's own credentials pass: another scheme's Authorization and the other cookies", async () => {
  for (const host of [PUBLIC_HOST.toUpperCase(), PROTECTED_HOST.toUpperCase()]) {
    const { status, seen } = await http1(host, [
      ['cookie', `_portcullis=${handle}; theme=dark`],
      ['authorization', 'Bearer upstream-token'],
    ]);
    assert.equal(status, 200, host);
    assert.deepEqual(seen?.headers.authorization, ['Bearer upstream-token'], host);
    assert.deepEqual(seen?.headers.cookie, ['theme=dark'], host);
  }
});

describe('a single route table (a wildcard host)', () => {
  before(async () => {
    portcullis.writeConfig({
      ...portcullis.baseConfig(),
      routes: routes([
        { from: 'https://*.wild.example.com', to: upstreamUrl, allow_public_unauthenticated_access: true },
      ]),
    });
    await waitFor(async () => (await http1('x.wild.example.com', [])).status === 200, {
      what: 'the wildcard route',
    });
    await portcullis.waitForEnvoyToApply('the single route table');
  });

  matrix('single');
});

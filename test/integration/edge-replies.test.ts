// Answers at the edge, through a real Envoy configured by Portcullis (issue 33): two different
// session credentials in one request are refused with a 400 page (item 11), Envoy's own failure
// replies name the request id in their body, and a GET to sign-out never signs out, even with the
// right token (info items).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, constants } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { startPortcullis, type TestPortcullis, adaSession } from '../support/portcullis.js';
import { sendToListener } from '../support/listener-request.js';
import { freePort } from '../support/ports.js';

const APP = 'app.example.com';
const DOWN = 'down.example.com';

let upstream: Server;
let hits = 0;
let portcullis: TestPortcullis;

before(async () => {
  upstream = createServer((req, res) => {
    hits += 1;
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain' }).end('upstream');
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  portcullis = await startPortcullis({
    routes: [
      { from: `https://${APP}`, to: upstreamUrl, allowed_users: ['ada@example.com'] },
      // Nothing listens there: Envoy answers 503 itself.
      {
        from: `https://${DOWN}`,
        to: `http://127.0.0.1:${await freePort()}`,
        allow_public_unauthenticated_access: true,
      },
    ],
  });
});

after(async () => {
  await portcullis?.stop();
  upstream?.closeAllConnections();
  await new Promise((resolve) => upstream?.close(resolve));
});

/** A fresh session of Ada's in the store and a handle for it. */
async function session(id: string): Promise<string> {
  await portcullis.running.sessions.put(adaSession({ id }));
  return portcullis.running.authorize.handles().issue(id);
}

/** The request id Envoy put in the answer's headers, and that it is in the body too. */
function assertRequestIdInBody(
  answer: { headers: Record<string, unknown>; body: string },
  label: string,
): void {
  const id = answer.headers['x-request-id'];
  assert.equal(typeof id, 'string', `${label}: x-request-id`);
  assert.ok(answer.body.includes(id as string), `${label}: the body names ${String(id)}: ${answer.body}`);
}

test('two different session credentials are refused with a 400 page; the upstream is never reached', async () => {
  const victim = await session('victim');
  const tossed = await session('tossed');
  const alone = await sendToListener(portcullis.proxyPort, APP, '/', {
    headers: { cookie: `_portcullis=${victim}` },
  });
  assert.equal(alone.status, 200, 'one session opens the route');
  const before = hits;
  const cases: [string, Record<string, string>][] = [
    ['two cookies in one field', { cookie: `_portcullis=${tossed}; theme=dark; _portcullis=${victim}` }],
    [
      'a cookie and another token',
      { cookie: `_portcullis=${victim}`, authorization: `Portcullis ${tossed}` },
    ],
  ];
  for (const [name, headers] of cases) {
    for (const path of ['/', '/.portcullis/user']) {
      const answer = await sendToListener(portcullis.proxyPort, APP, path, {
        headers: { accept: 'text/html', ...headers },
      });
      assert.equal(answer.status, 400, `${name} ${path}`);
      assert.match(answer.body, /two different Portcullis sessions/, `${name} ${path}`);
      assertRequestIdInBody(answer, `${name} ${path}`);
    }
  }
  // Two Cookie fields (a sibling's cookie and this host's): HTTP/2 crumbs, joined by Envoy.
  const h2 = connect(`http://127.0.0.1:${portcullis.proxyPort}`);
  try {
    const status = await new Promise<number>((resolve, reject) => {
      const stream = h2.request({
        [constants.HTTP2_HEADER_PATH]: '/',
        [constants.HTTP2_HEADER_AUTHORITY]: APP,
        cookie: [`_portcullis=${tossed}`, `_portcullis=${victim}`],
      });
      stream.on('response', (headers) => resolve(Number(headers[constants.HTTP2_HEADER_STATUS])));
      stream.on('error', reject);
      stream.resume();
      stream.end();
    });
    assert.equal(status, 400, 'HTTP/2 cookie crumbs');
  } finally {
    h2.close();
  }
  assert.equal(hits, before, 'no refused request reached the upstream');
});

test("Envoy's own failure replies carry the request id in the body", async () => {
  const noRoute = await sendToListener(portcullis.proxyPort, 'nowhere.example.com', '/');
  assert.equal(noRoute.status, 404);
  assertRequestIdInBody(noRoute, 'no route');
  const down = await sendToListener(portcullis.proxyPort, DOWN, '/');
  assert.equal(down.status, 503);
  assertRequestIdInBody(down, 'upstream down');
  // ext_authz's own pages are left as Portcullis wrote them.
  const signIn = await sendToListener(portcullis.proxyPort, APP, '/', {
    headers: { accept: 'application/json' },
  });
  assert.equal(signIn.status, 401);
  assert.equal(JSON.parse(signIn.body).request_id, signIn.headers['x-request-id']);
});

test('a GET to sign-out never signs out, even with the right token; the POST form does', async () => {
  const handle = await session('signing-out');
  const cookie = `_portcullis=${handle}`;
  const confirm = await sendToListener(portcullis.proxyPort, APP, '/.portcullis/sign_out', {
    headers: { cookie },
  });
  assert.equal(confirm.status, 200);
  const token = /name="portcullis_csrf" value="([^"]+)"/.exec(confirm.body)?.[1];
  assert.ok(token, `the confirmation page carries the token: ${confirm.body}`);
  const withToken = await sendToListener(
    portcullis.proxyPort,
    APP,
    `/.portcullis/sign_out?portcullis_csrf=${encodeURIComponent(token)}`,
    { headers: { cookie } },
  );
  assert.equal(withToken.status, 200, 'GET with the token: the confirmation again');
  assert.match(withToken.body, /method="post"/i);
  assert.equal(withToken.headers['set-cookie'], undefined, 'no cookie cleared');
  const still = await sendToListener(portcullis.proxyPort, APP, '/', { headers: { cookie } });
  assert.equal(still.status, 200, 'the session still opens the route');
  const posted = await sendToListener(portcullis.proxyPort, APP, '/.portcullis/sign_out', {
    method: 'POST',
    headers: { cookie },
    form: new URLSearchParams({ portcullis_csrf: token }),
  });
  assert.ok([200, 302].includes(posted.status), `POST signs out: ${posted.status}`);
  const gone = await sendToListener(portcullis.proxyPort, APP, '/', {
    headers: { cookie, accept: 'application/json' },
  });
  assert.equal(gone.status, 401, 'the session is over');
});

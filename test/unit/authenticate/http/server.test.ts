// The own-endpoint server over real loopback HTTP: request decoding (Host, scheme, cookies,
// bounded form bodies), dispatch by host and path, security headers on every answer, and no
// exception or stack trace ever reaching a client.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { createOwnServer } from '../../../../src/authenticate/http/server.js';
import { OWN_SESSION_HEADER } from '../../../../src/contract/endpoints.js';
import { AUTH_URL, CALLBACK_PATH, IDP_A, harness, type Harness } from './harness.js';

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

async function withServer(
  h: Harness,
  run: (send: (options: SendOptions) => Promise<Answer>) => Promise<void>,
): Promise<void> {
  const server = createOwnServer(h.context);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const send = (options: SendOptions): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: options.method ?? 'GET',
          path: options.path,
          setHost: false,
          headers: { host: options.host, 'x-forwarded-proto': 'https', ...options.headers },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString(),
            }),
          );
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(options.body);
    });
  try {
    await run(send);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

interface SendOptions {
  readonly path: string;
  readonly host: string;
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | Buffer;
}

const AUTH_HOST = new URL(AUTH_URL).host;

test('the authenticate host: / goes to the user page, robots.txt disallows all; security headers on each', async () => {
  await withServer(harness(), async (send) => {
    const root = await send({ path: '/', host: AUTH_HOST });
    assert.equal(root.status, 302);
    assert.equal(root.headers.location, '/.portcullis/');
    for (const name of [
      'cache-control',
      'x-content-type-options',
      'content-security-policy',
      'x-frame-options',
    ])
      assert.ok(root.headers[name] !== undefined, name);
    assert.match(String(root.headers['content-security-policy']), /frame-ancestors 'none'/);
    const robots = await send({ path: '/robots.txt', host: AUTH_HOST });
    assert.equal(robots.status, 200);
    assert.match(robots.body, /Disallow: \//);
    assert.equal(robots.headers['x-content-type-options'], 'nosniff');
    const missing = await send({ path: '/nothing', host: AUTH_HOST });
    assert.equal(missing.status, 404);
    assert.match(String(missing.headers['content-security-policy']), /frame-ancestors 'none'/);
  });
});

test('route hosts answer only their own paths, and only when a route is there', async () => {
  await withServer(harness(), async (send) => {
    const login = await send({
      path: '/.portcullis/api/v1/login?portcullis_redirect_uri=http://localhost:1/cb',
      host: 'app.test:8443',
    });
    assert.equal(login.status, 200, login.body);
    const signIn = new URL(login.body.trim());
    assert.equal(signIn.origin, AUTH_URL);
    assert.equal(
      (await send({ path: '/.portcullis/sign_in', host: 'app.test' })).status,
      404,
      'sign-in lives on the authenticate host',
    );
    assert.equal((await send({ path: '/.portcullis/api/v1/login', host: 'unknown.test' })).status, 404);
    assert.equal((await send({ path: '/docs', host: 'app.test' })).status, 404);
  });
});

test('a bad Host, scheme or request target is a 400', async () => {
  await withServer(harness(), async (send) => {
    assert.equal((await send({ path: '/', host: 'a/b@auth.test' })).status, 400);
    assert.equal((await send({ path: '/', host: 'user@auth.test' })).status, 400);
    assert.equal(
      (await send({ path: '/', host: AUTH_HOST, headers: { 'x-forwarded-proto': 'gopher' } })).status,
      400,
    );
    assert.equal((await send({ path: 'http://evil.test/', host: AUTH_HOST })).status, 400);
    assert.equal((await send({ path: '//evil.test/', host: AUTH_HOST })).status, 400);
  });
});

test('bodies over 16 KiB are 413; a posted form reaches the handler', async () => {
  const h = harness();
  await withServer(h, async (send) => {
    const big = await send({
      path: CALLBACK_PATH,
      host: AUTH_HOST,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: Buffer.alloc(17 * 1024, 'a'),
    });
    assert.equal(big.status, 413);
    const posted = await send({
      path: CALLBACK_PATH,
      host: AUTH_HOST,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' },
      body: 'error=access_denied&state=garbage',
    });
    assert.equal(posted.status, 400, 'the form was read: its state is refused');
    assert.match(posted.body, /state is not readable/);
  });
});

test('a handler that throws is a 500 page with the request id, logged, without a stack trace', async () => {
  const h = harness();
  const provider = h.providers.get(IDP_A);
  assert.ok(provider !== undefined);
  provider.failAuthorization = new Error('secret detail at /work/main/src/thing.ts:12');
  await withServer(h, async (send) => {
    const answer = await send({
      path: `/.portcullis/sign_in?portcullis_redirect_uri=${encodeURIComponent('https://app.test/')}`,
      host: AUTH_HOST,
      headers: { 'x-request-id': 'req-abc' },
    });
    assert.equal(answer.status, 500);
    assert.match(answer.body, /req-abc/);
    assert.ok(
      !answer.body.includes('secret detail') && !answer.body.includes('.ts:'),
      'no error text or stack',
    );
  });
  const logged = h.logger.records.find((r) => r.level === 'error');
  assert.ok(logged !== undefined);
  assert.ok(!JSON.stringify(logged.obj).includes('portcullis_redirect_uri'), 'the query is not logged');
});

test('the session handle comes from the ext_authz header, else the cookie', async () => {
  const h = harness();
  const now = h.clock.now;
  await h.sessions.put({
    id: 's1',
    userId: 'alice',
    email: undefined,
    emailVerified: false,
    name: undefined,
    groups: [],
    claims: {},
    issuedAt: now,
    expiresAt: now + 60_000,
    idpId: IDP_A,
  });
  const handle = h.handles.issue('s1');
  const path = `/.portcullis/sign_in?portcullis_redirect_uri=${encodeURIComponent('https://app.test/x')}`;
  await withServer(h, async (send) => {
    for (const headers of [{ [OWN_SESSION_HEADER]: handle }, { cookie: `other=1; _portcullis=${handle}` }]) {
      const answer = await send({ path, host: AUTH_HOST, headers });
      assert.equal(answer.status, 302);
      assert.match(
        String(answer.headers.location),
        /^https:\/\/app\.test\/\.portcullis\/callback\?/,
        'straight to the handoff',
      );
    }
    const without = await send({ path, host: AUTH_HOST });
    assert.match(String(without.headers.location), /^https:\/\/idp\.test\//);
  });
});

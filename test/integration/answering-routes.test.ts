// Routes that answer by themselves through a real Envoy (issue 26): every redirect field (scheme,
// https, host, port, path, prefix) and code (301, 302, 303, 307, 308), strip_query, and a
// response's status, body and headers; a protected response or redirect route without a session
// sends the browser to sign-in first and answers once signed in, while a public one answers
// directly; no upstream is ever reached.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startEchoUpstream, type EchoUpstream } from '../support/upstreams.js';
import {
  proxyRequest,
  startPortcullis,
  type ProxyResponse,
  type TestPortcullis,
  adaSession,
} from '../support/portcullis.js';
import { TEST_AUTHENTICATE_URL } from '../support/sign-in-config.js';
import { signInLocation } from '../../src/contract/endpoints.js';

let upstream: EchoUpstream;
let portcullis: TestPortcullis;
let handle: string;

const ada = adaSession();

const PUBLIC = { allow_public_unauthenticated_access: true };
const redirect = (
  match: Record<string, unknown>,
  fields: Record<string, unknown>,
): Record<string, unknown> => ({
  from: 'https://r.test',
  ...match,
  redirect: fields,
  ...PUBLIC,
});

before(async () => {
  upstream = await startEchoUpstream({ id: 'upstream' });
  portcullis = await startPortcullis({
    routes: [
      redirect({ path: '/https' }, { https_redirect: true }),
      redirect(
        { path: '/scheme' },
        { scheme_redirect: 'http', host_redirect: 'new.test', port_redirect: 8443 },
      ),
      redirect({ path: '/path' }, { path_redirect: '/elsewhere', response_code: 302 }),
      redirect({ prefix: '/old/' }, { prefix_rewrite: '/new/', response_code: 303 }),
      redirect({ path: '/strip' }, { host_redirect: 'new.test', strip_query: true, response_code: 307 }),
      redirect({ path: '/permanent' }, { host_redirect: 'new.test', response_code: 308 }),
      // A forwarding route on the same host: answering routes beside it leave it alone.
      { from: 'https://r.test', to: upstream.url, ...PUBLIC },
      {
        from: 'https://status.test',
        response: { status: 503, body: 'down for maintenance\n' },
        set_response_headers: { 'Content-Type': 'text/plain; charset=utf-8' },
        ...PUBLIC,
      },
      {
        from: 'https://private.test',
        path: '/status',
        response: { status: 200, body: 'private ok' },
        allowed_users: ['ada@example.com'],
      },
      {
        from: 'https://private.test',
        redirect: { host_redirect: 'elsewhere.test' },
        allowed_users: ['ada@example.com'],
      },
    ],
  });
  await portcullis.running.sessions.put(ada);
  handle = portcullis.running.authorize.handles().issue(ada.id);
});

after(async () => {
  await portcullis?.stop();
  await upstream?.stop();
});

function get(host: string, path: string, headers: Record<string, string> = {}): Promise<ProxyResponse> {
  return proxyRequest(portcullis.proxyPort, host, path, { headers });
}

test('each redirect field and code, with the rest of the URL kept', async () => {
  const cases: [path: string, status: number, location: string][] = [
    ['/https?q=1', 301, 'https://r.test/https?q=1'],
    ['/scheme?q=1', 301, 'http://new.test:8443/scheme?q=1'],
    ['/path?q=1', 302, 'http://r.test/elsewhere?q=1'],
    ['/old/a/b?q=1', 303, 'http://r.test/new/a/b?q=1'],
    ['/strip?q=1&r=2', 307, 'http://new.test/strip'],
    ['/permanent?q=1', 308, 'http://new.test/permanent?q=1'],
  ];
  for (const [path, status, location] of cases) {
    const response = await get('r.test', path);
    assert.equal(response.status, status, `${path}: ${response.status} ${response.body.slice(0, 200)}`);
    assert.equal(response.headers.location, location, path);
  }
  assert.equal(upstream.requests, 0, 'no redirect reached the upstream');
  const forwarded = await get('r.test', '/other');
  assert.equal(forwarded.status, 200, 'the forwarding route beside them still forwards');
  assert.equal(upstream.requests, 1);
});

test('a public response route answers its status, body and headers directly', async () => {
  const response = await get('status.test', '/any/path?x=1');
  assert.equal(response.status, 503);
  assert.equal(response.body, 'down for maintenance\n');
  assert.equal(response.headers['content-type'], 'text/plain; charset=utf-8');
  assert.equal(response.headers.location, undefined);
});

test('a protected response or redirect route sends a browser without a session to sign-in first', async () => {
  for (const path of ['/status', '/somewhere?a=1']) {
    const anonymous = await get('private.test', path, { accept: 'text/html' });
    assert.equal(anonymous.status, 302, `${path}: ${anonymous.status} ${anonymous.body.slice(0, 200)}`);
    assert.equal(
      anonymous.headers.location,
      signInLocation(TEST_AUTHENTICATE_URL, `http://private.test${path}`),
      path,
    );
    assert.notEqual(anonymous.body, 'private ok');
  }
  const cookie = `_portcullis=${handle}`;
  const answered = await get('private.test', '/status', { cookie });
  assert.equal(answered.status, 200, answered.body.slice(0, 200));
  assert.equal(answered.body, 'private ok');
  const redirected = await get('private.test', '/somewhere?a=1', { cookie });
  assert.equal(redirected.status, 301, redirected.body.slice(0, 200));
  assert.equal(redirected.headers.location, 'http://elsewhere.test/somewhere?a=1');
});

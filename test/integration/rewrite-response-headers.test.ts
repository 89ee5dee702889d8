// `rewrite_response_headers` through a real Envoy configured by Portcullis: an upstream that
// redirects to its internal address has the prefix of its Location (and of other named headers)
// replaced on public and protected routes; values that do not start with a rule's prefix, headers
// no rule names and routes without rules pass unchanged, and a value a rule empties is removed;
// only the first matching rule of a header applies; Portcullis's own sign-in redirect is never
// rewritten; a reload that edits the rules takes effect, and one that removes the last rule takes
// the filter out of the chain.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { adaSession, proxyRequest, startPortcullis, type TestPortcullis } from '../support/portcullis.js';
import { waitFor } from '../support/wait.js';
import { adminRequest } from '../../src/envoy/admin.js';
import { HTTP_FILTER_REWRITE_RESPONSE_HEADERS as FILTER } from '../../src/contract/names.js';

const PUBLIC_HOST = 'pub.example.com';
const PROTECTED_HOST = 'app.example.com';
const PLAIN_HOST = 'plain.example.com';
const INTERNAL = 'http://internal:8080';

/** What the upstream answers on every request: a redirect to itself, with more headers to rewrite. */
const UPSTREAM_HEADERS = {
  location: `${INTERNAL}/foo?x=1`,
  'content-location': `${INTERNAL}/content`,
  'x-other': 'http://elsewhere:9/keep',
  'x-internal-base': INTERNAL,
  link: [`<${INTERNAL}/style.css>; rel=preload`, '<https://cdn.example.net/a.js>; rel=preload'],
};

let upstream: Server;
let upstreamUrl: string;
let portcullis: TestPortcullis;
let cookie: string;

function routes(publicValue: string | undefined): Record<string, unknown>[] {
  return [
    {
      from: `https://${PUBLIC_HOST}`,
      to: upstreamUrl,
      allow_public_unauthenticated_access: true,
      ...(publicValue === undefined
        ? {}
        : {
            rewrite_response_headers: [
              { header: 'Location', prefix: `${INTERNAL}/`, value: publicValue },
              { header: 'LINK', prefix: `<${INTERNAL}`, value: `<https://${PUBLIC_HOST}` },
              { header: 'X-Other', prefix: INTERNAL, value: 'never' },
              { header: 'X-Internal-Base', prefix: INTERNAL, value: '' },
            ],
          }),
    },
    {
      from: `https://${PROTECTED_HOST}`,
      to: upstreamUrl,
      allowed_users: ['ada@example.com'],
      ...(publicValue === undefined
        ? {}
        : {
            rewrite_response_headers: [
              { header: 'location', prefix: `${INTERNAL}/`, value: `https://${PROTECTED_HOST}/` },
              // Matches every absolute URL: the sign-in redirect too, were it rewritten, and the
              // first rule's result, were later rules tried on it.
              { header: 'location', prefix: 'http', value: 'rewritten:' },
            ],
          }),
    },
    { from: `https://${PLAIN_HOST}`, to: upstreamUrl, allow_public_unauthenticated_access: true },
  ];
}

before(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    res.writeHead(302, UPSTREAM_HEADERS).end();
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  portcullis = await startPortcullis({ routes: routes(`https://${PUBLIC_HOST}/`) });
  const ada = adaSession();
  await portcullis.running.sessions.put(ada);
  cookie = `_portcullis=${portcullis.running.authorize.handles().issue(ada.id)}`;
});

after(async () => {
  await portcullis?.stop();
  upstream?.closeAllConnections();
  await new Promise((resolve) => upstream?.close(resolve));
});

test('a public route rewrites the prefix of Location and of each Link value; other values pass unchanged', async () => {
  const answer = await proxyRequest(portcullis.proxyPort, PUBLIC_HOST, '/');
  assert.equal(answer.status, 302);
  assert.equal(answer.headers.location, `https://${PUBLIC_HOST}/foo?x=1`);
  // Node joins the Link fields with ", ": the first one rewritten, the second kept, in order.
  assert.equal(
    answer.headers.link,
    `<https://${PUBLIC_HOST}/style.css>; rel=preload, <https://cdn.example.net/a.js>; rel=preload`,
  );
  assert.equal(answer.headers['x-other'], UPSTREAM_HEADERS['x-other'], 'prefix does not match');
  assert.equal(answer.headers['content-location'], UPSTREAM_HEADERS['content-location'], 'no rule names it');
  assert.equal(answer.headers['x-internal-base'], undefined, 'a value left empty is removed');
});

test('a protected route rewrites its upstream redirect with the first matching rule only', async () => {
  const answer = await proxyRequest(portcullis.proxyPort, PROTECTED_HOST, '/', { headers: { cookie } });
  assert.equal(answer.status, 302);
  assert.equal(answer.headers.location, `https://${PROTECTED_HOST}/foo?x=1`);
});

test("Portcullis's own sign-in redirect on a route with rules is not rewritten", async () => {
  const answer = await proxyRequest(portcullis.proxyPort, PROTECTED_HOST, '/');
  assert.equal(answer.status, 302);
  const location = String(answer.headers.location);
  assert.match(location, /^http/, `sign-in redirect kept: ${location}`);
  assert.ok(!location.startsWith('rewritten:'));
  assert.ok(!location.startsWith(INTERNAL));
});

test('a route without rules passes the upstream headers unchanged', async () => {
  const answer = await proxyRequest(portcullis.proxyPort, PLAIN_HOST, '/');
  assert.equal(answer.status, 302);
  assert.equal(answer.headers['x-internal-base'], INTERNAL);
  assert.equal(answer.headers.location, UPSTREAM_HEADERS.location);
  assert.equal(answer.headers.link, UPSTREAM_HEADERS.link.join(', '));
});

test('a reload that edits a rule takes effect, and one that removes every rule restores the upstream headers', async () => {
  const before = await adminRequest(portcullis.adminUrl, '/config_dump?resource=dynamic_listeners');
  assert.ok(before.body.includes(FILTER), 'the filter is in the chain while a route has rules');
  const edited = 'https://edited.example.com/base/';
  portcullis.writeConfig({ ...portcullis.baseConfig(), routes: routes(edited) });
  await portcullis.waitForEnvoyToApply('the edited rule');
  await waitFor(
    async () =>
      (await proxyRequest(portcullis.proxyPort, PUBLIC_HOST, '/')).headers.location === `${edited}foo?x=1`,
    { what: 'the edited rule to apply' },
  );
  portcullis.writeConfig({ ...portcullis.baseConfig(), routes: routes(undefined) });
  await portcullis.waitForEnvoyToApply('the config without rules');
  const listeners = await adminRequest(portcullis.adminUrl, '/config_dump?resource=dynamic_listeners');
  assert.ok(!listeners.body.includes(FILTER), 'the filter left the chain with the last rule');
  await waitFor(
    async () =>
      (await proxyRequest(portcullis.proxyPort, PUBLIC_HOST, '/')).headers.location ===
      UPSTREAM_HEADERS.location,
    { what: 'the rules to be gone' },
  );
  const answer = await proxyRequest(portcullis.proxyPort, PROTECTED_HOST, '/', { headers: { cookie } });
  assert.equal(answer.headers.location, UPSTREAM_HEADERS.location);
});

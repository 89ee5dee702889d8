// Authorization through a real Envoy: ext_authz decides every protected request, upstreams get a
// signed identity assertion that verifies against the JWKS Envoy serves, denied and anonymous
// requests get the right answer for their client, spoofed identity never reaches an upstream, and
// an ext_authz outage is a 503, never an open door. Sessions are created directly in the store.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseSetCookie } from 'cookie';
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import { startEchoUpstream, type EchoResponse, type EchoUpstream } from '../support/upstreams.js';
import {
  envoyHasApplied,
  proxyRequest,
  startPortcullis,
  type TestPortcullis,
  adaSession,
} from '../support/portcullis.js';
import { freePort } from '../support/ports.js';
import { waitFor } from '../support/wait.js';
import type { Session } from '../../src/session/session.js';
import { buildSnapshot } from '../../src/xds/snapshot/build-snapshot.js';
import { compile } from '../../src/xds/compile/compile.js';
import { CLUSTER_TYPE } from '../../src/proto/type-urls.js';
import { adminRequest } from '../../src/envoy/admin.js';
import { REDIRECT_URI_PARAM } from '../../src/contract/endpoints.js';
import { TEST_AUTHENTICATE_URL } from '../support/sign-in-config.js';

let upstream: EchoUpstream;
/** An upstream that sets a cookie of its own on every answer. */
let cookieUpstream: Server;
let portcullis: TestPortcullis;
const adaOnly = { allow: { or: [{ email: { is: 'ada@example.com' } }] } };

const ada = adaSession({
  groups: ['admins'],
  claims: { department: 'research', groups: ['admins'], email: 'ada@example.com' },
});

before(async () => {
  upstream = await startEchoUpstream({ id: 'up' });
  cookieUpstream = createServer((_req, res) =>
    res.writeHead(200, { 'set-cookie': 'upstream=1; Path=/' }).end('ok'),
  );
  await new Promise<void>((resolve) => cookieUpstream.listen(0, '127.0.0.1', resolve));
  const cookieUpstreamUrl = `http://127.0.0.1:${(cookieUpstream.address() as AddressInfo).port}`;
  portcullis = await startPortcullis({
    jwt_claims_headers: ['department'],
    routes: [
      { from: 'https://protected.test', to: upstream.url, policy: adaOnly, pass_identity_headers: true },
      { from: 'https://nopass.test', to: upstream.url, policy: adaOnly },
      { from: 'https://bob-only.test', to: upstream.url, allowed_users: ['bob@example.com'] },
      { from: 'https://public.test', to: upstream.url, allow_public_unauthenticated_access: true },
      { from: 'https://cookies.test', to: cookieUpstreamUrl, policy: adaOnly },
    ],
  });
  await portcullis.running.sessions.put(ada);
});

after(async () => {
  await portcullis?.stop();
  await upstream?.stop();
  cookieUpstream?.closeAllConnections();
  await new Promise((resolve) => cookieUpstream?.close(resolve));
});

const cookieFor = (session: Session): string =>
  `theme=dark; _portcullis=${portcullis.running.authorize.handles().issue(session.id)}`;

async function get(
  host: string,
  headers: Record<string, string> = {},
  path = '/',
): Promise<Awaited<ReturnType<typeof proxyRequest>>> {
  return proxyRequest(portcullis.proxyPort, host, path, { headers });
}

describe('authorize through Envoy', () => {
  test('an allowed request reaches the upstream with an assertion that verifies against the JWKS', async () => {
    const response = await get('protected.test', { cookie: cookieFor(ada) }, '/page');
    assert.equal(response.status, 200, response.body);
    const seen = response.json<EchoResponse>().headers;
    const token = seen['x-portcullis-jwt-assertion'];
    assert.equal(typeof token, 'string');
    const jwks = await get('protected.test', {}, '/.well-known/portcullis/jwks.json');
    assert.equal(jwks.status, 200);
    const { payload, protectedHeader } = await jwtVerify(token as string, createLocalJWKSet(jwks.json()), {
      issuer: 'protected.test',
      audience: 'protected.test',
    });
    assert.equal(protectedHeader.alg, 'ES256');
    assert.equal(payload.sub, 'user-ada');
    assert.equal(payload.email, 'ada@example.com');
    assert.equal(payload.name, 'Ada Lovelace');
    assert.deepEqual(payload.groups, ['admins']);
    assert.equal(payload.sid, 'session-ada');
    assert.equal(payload.department, 'research');
    assert.equal((payload.exp ?? 0) - (payload.iat ?? 0), 300);
    assert.equal(seen['x-portcullis-claim-department'], 'research');
    assert.equal(seen.cookie, 'theme=dark', 'the session cookie is removed, other cookies kept');
  });

  test('Authorization: Portcullis <token> is a session too, and is not forwarded', async () => {
    const handle = portcullis.running.authorize.handles().issue(ada.id);
    const response = await get('protected.test', {
      authorization: `Portcullis ${handle}`,
      accept: 'application/json',
    });
    assert.equal(response.status, 200);
    assert.equal(response.json<EchoResponse>().headers.authorization, undefined);
  });

  test('a denied user gets 403: an HTML page for browsers, JSON for API clients', async () => {
    const html = await get('bob-only.test', { cookie: cookieFor(ada), accept: 'text/html' });
    assert.equal(html.status, 403);
    assert.match(String(html.headers['content-type']), /text\/html/);
    assert.match(html.body, /<title>403 Forbidden · Portcullis<\/title>/);
    assert.match(html.body, /403 Forbidden/);
    const json = await get('bob-only.test', { cookie: cookieFor(ada), accept: 'application/json' });
    assert.equal(json.status, 403);
    const body = json.json<{ error: string; request_id: string }>();
    assert.equal(body.error, 'Forbidden');
    assert.ok(body.request_id.length > 0);
  });

  test('no session: browsers are sent to sign in, API clients get 401', async () => {
    const browser = await get(
      'protected.test',
      { accept: 'text/html,application/xhtml+xml' },
      '/deep/link?x=1',
    );
    assert.equal(browser.status, 302);
    const location = new URL(String(browser.headers.location));
    assert.equal(location.origin, TEST_AUTHENTICATE_URL, 'sign-in happens on the authenticate host');
    assert.equal(location.pathname, '/.portcullis/sign_in');
    assert.deepEqual(
      [...location.searchParams],
      [[REDIRECT_URI_PARAM, 'http://protected.test/deep/link?x=1']],
    );
    assert.equal((await get('protected.test')).status, 302, 'no Accept header means a browser');
    assert.equal((await get('protected.test', { accept: 'application/json' })).status, 401);
    assert.equal((await get('protected.test', { 'x-requested-with': 'XMLHttpRequest' })).status, 401);
  });

  test('a forged session handle is no session', async () => {
    const forged = `${Buffer.from('session-ada').toString('base64url')}.AAAA`;
    assert.equal(
      (await get('protected.test', { cookie: `_portcullis=${forged}`, accept: 'application/json' })).status,
      401,
    );
  });

  test('spoofed identity headers never reach the upstream', async () => {
    const spoofed = {
      'x-portcullis-jwt-assertion': 'forged',
      'x-portcullis-claim-department': 'forged',
      'x-portcullis-anything': 'forged',
    };
    const allowed = (await get('protected.test', { ...spoofed, cookie: cookieFor(ada) })).json<EchoResponse>()
      .headers;
    assert.notEqual(allowed['x-portcullis-jwt-assertion'], 'forged');
    assert.equal(allowed['x-portcullis-claim-department'], 'research');
    assert.equal(allowed['x-portcullis-anything'], undefined);
    const noPass = (await get('nopass.test', { ...spoofed, cookie: cookieFor(ada) })).json<EchoResponse>()
      .headers;
    assert.equal(noPass['x-portcullis-jwt-assertion'], undefined);
    assert.equal(noPass['x-portcullis-claim-department'], undefined);
    assert.equal(noPass['x-portcullis-anything'], undefined);
    const publicRoute = (await get('public.test', spoofed)).json<EchoResponse>().headers;
    assert.equal(publicRoute['x-portcullis-jwt-assertion'], undefined);
    assert.equal(publicRoute['x-portcullis-claim-department'], undefined);
    assert.equal(publicRoute['x-portcullis-anything'], undefined);
  });

  test('a public upstream never receives a session: cookie and Portcullis token are stripped', async () => {
    const handle = portcullis.running.authorize.handles().issue(ada.id);
    const seen = (
      await get('public.test', {
        cookie: `theme=dark; _portcullis=${handle}; lang=en`,
        authorization: `Portcullis ${handle}`,
      })
    ).json<EchoResponse>().headers;
    assert.equal(seen.cookie, 'theme=dark; lang=en');
    assert.equal(seen.authorization, undefined);
    const bearer = (await get('public.test', { authorization: 'Bearer app-token' })).json<EchoResponse>()
      .headers;
    assert.equal(bearer.authorization, 'Bearer app-token', "the app's own credentials pass untouched");
  });

  test('a public route works with no session', async () => {
    const response = await get('public.test');
    assert.equal(response.status, 200);
  });

  test('an allow hands a cookie session a decision token beside the upstream’s own Set-Cookie; a bearer gets none', async () => {
    // None is minted within the revocation margin of the session's last change (its put).
    const response = await waitFor(
      async () => {
        const answer = await get('cookies.test', { cookie: cookieFor(ada) });
        return [answer.headers['set-cookie'] ?? []].flat().some((c) => c.startsWith('_portcullis_dt='))
          ? answer
          : undefined;
      },
      { what: 'a decision cookie', timeoutMs: 10_000, intervalMs: 100 },
    );
    assert.equal(response.status, 200, response.body);
    const raw = response.headers['set-cookie'];
    const setCookies = raw === undefined ? [] : [raw].flat();
    assert.ok(setCookies.includes('upstream=1; Path=/'), JSON.stringify(setCookies));
    const decision = setCookies.find((cookie) => cookie.startsWith('_portcullis_dt='));
    assert.ok(decision, JSON.stringify(setCookies));
    const cookie = parseSetCookie(decision);
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.secure, undefined, 'a plain-HTTP listener, like the session cookie');
    assert.equal(cookie.domain, undefined);
    assert.equal(decodeJwt(cookie.value ?? '').aud, 'cookies.test');
    const handle = portcullis.running.authorize.handles().issue(ada.id);
    const bearer = await get('cookies.test', { authorization: `Portcullis ${handle}` });
    assert.equal(bearer.status, 200);
    assert.deepEqual(bearer.headers['set-cookie'], ['upstream=1; Path=/']);
  });

  test('signing out takes effect at once', async () => {
    const bob: Session = { ...ada, id: 'session-short', userId: 'user-x' };
    await portcullis.running.sessions.put(bob);
    const cookie = `_portcullis=${portcullis.running.authorize.handles().issue(bob.id)}`;
    assert.equal((await get('protected.test', { cookie })).status, 200);
    await portcullis.running.sessions.delete(bob.id);
    assert.equal((await get('protected.test', { cookie, accept: 'application/json' })).status, 401);
  });

  test('one gRPC port: Envoy gets its config over ADS and its Checks answered on the same port', async () => {
    const good = portcullis.running.reloader.lastGoodBuild();
    assert.ok(good);
    const cluster = compile(good.ir)[CLUSTER_TYPE].find((entry) => entry.name === 'portcullis-authorize');
    assert.match(
      JSON.stringify(cluster?.message),
      new RegExp(`"port_value":${portcullis.running.grpcPort}\\b`),
    );
    assert.equal((await get('protected.test', { cookie: cookieFor(ada) })).status, 200);
    const stats = (
      await adminRequest(
        portcullis.adminUrl,
        '/stats?filter=ext_authz.ok%7Ccluster.portcullis-authorize.upstream_cx_total',
        { timeoutMs: 5000 },
      )
    ).body;
    assert.match(stats, /http\.ingress\.ext_authz\.ok: [1-9]/);
    assert.match(stats, /cluster\.portcullis-authorize\.upstream_cx_total: [1-9]/);
  });

  test('an ext_authz outage gives 503, never an open door', async () => {
    const good = portcullis.running.reloader.lastGoodBuild();
    assert.ok(good);
    const broken = structuredClone(compile(good.ir));
    const authorize = broken[CLUSTER_TYPE].find((cluster) => cluster.name === 'portcullis-authorize');
    assert.ok(authorize);
    const deadPort = await freePort();
    (
      authorize.message as {
        load_assignment: {
          endpoints: {
            lb_endpoints: { endpoint: { address: { socket_address: { port_value: number } } } }[];
          }[];
        };
      }
    ).load_assignment.endpoints[0]!.lb_endpoints[0]!.endpoint.address.socket_address.port_value = deadPort;
    portcullis.running.store.publish(buildSnapshot(broken).snapshot);
    await waitFor(() => envoyHasApplied(portcullis.adminUrl, portcullis.running), {
      what: 'Envoy to point ext_authz at a dead port',
    });
    const before = upstream.requests;
    const response = await get('protected.test', { cookie: cookieFor(ada) });
    assert.equal(response.status, 503);
    assert.equal(upstream.requests, before, 'nothing reached the upstream');
    assert.equal((await get('public.test')).status, 200, 'public routes still work');
    portcullis.running.store.publish(good.snapshot);
    await waitFor(async () => (await get('protected.test', { cookie: cookieFor(ada) })).status === 200, {
      what: 'authorization to come back',
    });
  });
});

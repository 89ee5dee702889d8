// Portcullis's own endpoints through a real Envoy (issue 24): `/.portcullis/*` on every route host and
// every path of the authenticate host reach Portcullis's HTTP server (here a loopback stand-in at
// IRInternal.http) with the session handle the request carried in OWN_SESSION_HEADER and without
// the session cookie; a client-sent copy of that header never arrives anywhere; ext_authz sees the
// Host with its port (the sign-in redirect and the assertion keep it); an upstream still never sees
// a credential. Under per-host scopes and under one route table.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { startEchoUpstream, type EchoResponse, type EchoUpstream } from '../support/upstreams.js';
import {
  proxyRequest,
  startPortcullis,
  type ProxyResponse,
  type TestPortcullis,
  adaSession,
} from '../support/portcullis.js';
import { TEST_AUTHENTICATE_URL } from '../support/sign-in-config.js';
import { waitFor } from '../support/wait.js';
import { OWN_SESSION_HEADER, signInLocation } from '../../src/contract/endpoints.js';
import { splitSessionCookie } from '../../src/session/cookie.js';
import { buildSnapshot } from '../../src/xds/snapshot/build-snapshot.js';
import { compile } from '../../src/xds/compile/compile.js';
import { routeScoping } from '../../src/xds/compile/route-scoping.js';

const AUTH_HOST = new URL(TEST_AUTHENTICATE_URL).hostname;

let upstream: EchoUpstream;
/** Stands in for Portcullis's HTTP server: echoes what Envoy sent it. */
let own: EchoUpstream;
let portcullis: TestPortcullis;
let handle: string;

const ada = adaSession();

function routes(extra: Record<string, unknown>[] = []): Record<string, unknown>[] {
  return [
    {
      from: 'https://app.test',
      to: upstream.url,
      allowed_users: ['ada@example.com'],
      pass_identity_headers: true,
    },
    { from: 'https://pub.test', to: upstream.url, allow_public_unauthenticated_access: true },
    ...extra,
  ];
}

/**
 * Publishes the running config's snapshot with IRInternal.http pointing at the stand-in, and waits
 * for Envoy to apply it (the all-in-one's own HTTP server is not what this test looks at).
 */
async function pointOwnHttpAtStandIn(): Promise<void> {
  const good = portcullis.running.reloader.lastGoodBuild();
  assert.ok(good?.ir.internal);
  const ir = { ...good.ir, internal: { ...good.ir.internal, http: { host: '127.0.0.1', port: own.port } } };
  portcullis.running.store.publish(buildSnapshot(compile(ir)).snapshot);
  await portcullis.waitForEnvoyToApply('the stand-in HTTP server');
}

before(async () => {
  upstream = await startEchoUpstream({ id: 'upstream' });
  own = await startEchoUpstream({ id: 'own' });
  portcullis = await startPortcullis({ routes: routes() });
  await portcullis.running.sessions.put(ada);
  handle = portcullis.running.authorize.handles().issue(ada.id);
  await pointOwnHttpAtStandIn();
});

after(async () => {
  await portcullis?.stop();
  await upstream?.stop();
  await own?.stop();
});

function get(host: string, path: string, headers: Record<string, string> = {}): Promise<ProxyResponse> {
  return proxyRequest(portcullis.proxyPort, host, path, { headers });
}

/** The request as the stand-in (or the upstream) saw it, asserting which one answered. */
function seenBy(response: ProxyResponse, id: 'own' | 'upstream', label: string): EchoResponse {
  assert.equal(response.status, 200, `${label}: ${response.status} ${response.body.slice(0, 200)}`);
  const seen = response.json<EchoResponse>();
  assert.equal(seen.id, id, label);
  return seen;
}

/** No session credential of any kind in what an upstream or the stand-in received. */
function assertNoCredentials(seen: EchoResponse, label: string): void {
  const cookie = seen.headers.cookie;
  const cookies = cookie === undefined ? [] : [cookie].flat();
  for (const field of cookies)
    assert.equal(splitSessionCookie(field, '_portcullis').hadSession, false, label);
  assert.equal(seen.headers.authorization, undefined, label);
  for (const value of Object.values(seen.headers)) {
    for (const item of [value ?? ''].flat()) assert.ok(!item.includes(handle), `${label}: the handle leaked`);
  }
}

/** Every rule of this file, under whatever route delivery the running config has. */
async function ownEndpointsBehave(): Promise<void> {
  // /.portcullis/* on a protected and a public route host: the handle travels in its own header.
  const viaCookie = seenBy(
    await get('app.test', '/.portcullis/x?y=1', {
      cookie: `theme=dark; _portcullis=${handle}`,
      [OWN_SESSION_HEADER]: 'forged',
    }),
    'own',
    'cookie on a route host',
  );
  assert.equal(viaCookie.url, '/.portcullis/x?y=1');
  assert.equal(viaCookie.headers[OWN_SESSION_HEADER], handle);
  assert.equal(viaCookie.headers.cookie, 'theme=dark', 'the session cookie is stripped, others kept');
  const viaHeader = seenBy(
    await get('pub.test:8443', '/.portcullis/user', { authorization: `Portcullis ${handle}` }),
    'own',
    'Authorization: Portcullis on a public host',
  );
  assert.equal(viaHeader.headers[OWN_SESSION_HEADER], handle);
  assert.equal(viaHeader.headers.authorization, undefined);
  // Without a session nothing is forwarded, and a client's copy never arrives.
  const forged = seenBy(
    await get('app.test', '/.portcullis/', { [OWN_SESSION_HEADER]: 'forged' }),
    'own',
    'no session',
  );
  assert.equal(forged.headers[OWN_SESSION_HEADER], undefined);
  // Every path of the authenticate host, whatever its case and port.
  for (const host of [AUTH_HOST, `${AUTH_HOST.toUpperCase()}:8443`]) {
    for (const path of ['/', '/oauth2/callback?code=c&state=s', '/.portcullis/sign_in?a=b', '/robots.txt']) {
      const seen = seenBy(await get(host, path, { [OWN_SESSION_HEADER]: 'forged' }), 'own', `${host}${path}`);
      assert.equal(seen.url, path);
      assert.equal(seen.headers[OWN_SESSION_HEADER], undefined, `${host}${path}: forged header arrived`);
    }
  }
  // The JWKS is still answered on every host, the authenticate host included, by ext_authz.
  const before = own.requests;
  for (const host of [AUTH_HOST, 'app.test:8443', 'pub.test']) {
    const jwks = await get(host, '/.well-known/portcullis/jwks.json');
    assert.equal(jwks.status, 200, host);
    assert.ok(Array.isArray(jwks.json<{ keys: unknown[] }>().keys), host);
  }
  assert.equal(own.requests, before, 'JWKS never reaches the HTTP server');
  // ext_authz sees the Host with its port: sign-in returns to it.
  const redirect = await get('app.test:8443', '/p/q?x=1&y=2', { accept: 'text/html' });
  assert.equal(redirect.status, 302);
  assert.equal(
    redirect.headers.location,
    signInLocation(TEST_AUTHENTICATE_URL, 'http://app.test:8443/p/q?x=1&y=2'),
  );
  // Upstreams: the assertion names the host with its port; no credential and no handle header.
  const jwks = createLocalJWKSet((await get('app.test', '/.well-known/portcullis/jwks.json')).json());
  const allowed = seenBy(
    await get('app.test:8443', '/page', {
      cookie: `theme=dark; _portcullis=${handle}`,
      [OWN_SESSION_HEADER]: 'forged',
    }),
    'upstream',
    'protected upstream',
  );
  assertNoCredentials(allowed, 'protected upstream');
  assert.equal(allowed.headers[OWN_SESSION_HEADER], undefined);
  await jwtVerify(String(allowed.headers['x-portcullis-jwt-assertion']), jwks, {
    issuer: 'app.test:8443',
    audience: 'app.test:8443',
  });
  const publicSeen = seenBy(
    await get('pub.test', '/', { authorization: `Portcullis ${handle}`, [OWN_SESSION_HEADER]: 'forged' }),
    'upstream',
    'public upstream',
  );
  assertNoCredentials(publicSeen, 'public upstream');
  assert.equal(publicSeen.headers[OWN_SESSION_HEADER], undefined);
}

describe('own endpoints through Envoy', () => {
  test('under per-host scopes', async () => {
    assert.equal(routeScoping(portcullis.running.reloader.lastGoodBuild()!.ir), 'per-host');
    await ownEndpointsBehave();
  });

  test('under one route table (a wildcard host)', async () => {
    portcullis.writeConfig({
      routes: routes([
        { from: 'https://*.wild.test', to: upstream.url, allow_public_unauthenticated_access: true },
      ]),
    });
    const wildcard = async (): Promise<boolean> =>
      portcullis.running.reloader
        .lastGoodBuild()
        ?.ir.virtualHosts.some((vhost) => vhost.name === '*.wild.test') === true;
    await waitFor(wildcard, { what: 'the wildcard config to load' });
    await portcullis.waitForEnvoyToApply('the wildcard config');
    assert.equal(routeScoping(portcullis.running.reloader.lastGoodBuild()!.ir), 'single');
    await pointOwnHttpAtStandIn();
    await ownEndpointsBehave();
    // The wildcard host has its own endpoints too.
    assert.equal(
      seenBy(await get('a.wild.test:8443', '/.portcullis/'), 'own', 'wildcard host').url,
      '/.portcullis/',
    );
  });
});

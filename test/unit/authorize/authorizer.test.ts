// The authorizer as Envoy's ext_authz sees it, without Envoy: Check requests over a real gRPC
// connection, malformed requests, client kinds, header stripping and header-injection defence;
// Portcullis's own endpoints, sessions of another IdP client, the sign-in redirect and the
// port-specific assertion (issue 24).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { registerAuthorizationService } from '../../../src/authorize/ext-authz/authorization-service.js';
import { messageType } from '../../../src/proto/proto-root.js';
import { decodeJwt, type JWTPayload } from 'jose';
import {
  authzFixture,
  FIXTURE_AUTHENTICATE_URL,
  FIXTURE_IDP,
  FIXTURE_ROUTE,
} from '../../support/authz-fixture.js';
import type { AuthorizeRequest } from '../../../src/authorize/decision.js';
import type { Session } from '../../../src/session/session.js';
import { ASSERTION_HEADER } from '../../../src/contract/authz.js';
import { OWN_SESSION_HEADER, REDIRECT_URI_PARAM, signInLocation } from '../../../src/contract/endpoints.js';
import { silentLogger } from '../../../src/shared/logger.js';
import type { Decision } from '../../../src/authorize/decision.js';
import { TEST_GRPC_CREDENTIAL, credentialClientOptions } from '../../support/grpc-credential.js';

const { sessions, handles, authorize } = authzFixture(7);
const ROUTE = FIXTURE_ROUTE;

let server: grpc.Server;
let client: grpc.Client;

before(async () => {
  await sessions.put({
    id: 'evil',
    userId: 'mallory',
    email: 'm@example.com',
    emailVerified: true,
    name: 'M',
    groups: [],
    claims: { department: 'x\r\nX-Admin: 1' },
    issuedAt: 0,
    expiresAt: Date.now() + 60_000,
    idpId: FIXTURE_IDP,
  });
  server = new grpc.Server();
  registerAuthorizationService(server, authorize, silentLogger, TEST_GRPC_CREDENTIAL);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    ),
  );
  client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), credentialClientOptions());
});

after(() => {
  client.close();
  server.forceShutdown();
});

/** Sends raw CheckRequest bytes and returns the decoded CheckResponse (or the gRPC error). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded protobufjs objects are untyped trees
function check(bytes: Uint8Array): Promise<Record<string, any>> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      '/envoy.service.auth.v3.Authorization/Check',
      (value: Uint8Array) => Buffer.from(value),
      (value: Buffer) => value,
      bytes,
      (err, response) => {
        if (err) reject(err);
        else {
          const type = messageType('envoy.service.auth.v3.CheckResponse');
          resolve(
            type.toObject(type.decode(response as Buffer), { enums: String }) as Record<string, unknown>,
          );
        }
      },
    );
  });
}

function request(
  headers: Record<string, string>,
  routeId: string | null = ROUTE,
  host = 'app.test',
): Uint8Array {
  const type = messageType('envoy.service.auth.v3.CheckRequest');
  return type
    .encode(
      type.fromObject({
        attributes: {
          request: { http: { id: 'req-1', method: 'GET', host, path: '/x', scheme: 'https', headers } },
          context_extensions: routeId === null ? {} : { route_id: routeId },
          source: { address: { socket_address: { address: '10.0.0.1', port_value: 5555 } } },
        },
      }),
    )
    .finish();
}

test('a Check for an unknown or missing route id is denied with 404', async () => {
  const missing = await check(request({}, null));
  assert.equal(missing.denied_response.status.code, 'NotFound');
  const unknown = await check(request({}, 'bbbbbbbbbbbbbbbb'));
  assert.equal(unknown.denied_response.status.code, 'NotFound');
});

test('an empty Check request is denied, not allowed and not a crash', async () => {
  const response = await check(new Uint8Array());
  assert.equal(response.status.code, 7);
  assert.ok(response.denied_response);
});

test('undecodable bytes are refused with INVALID_ARGUMENT (Envoy answers 503)', async () => {
  await assert.rejects(
    check(Buffer.from([0xff, 0xff, 0xff, 0xff])),
    (err: grpc.ServiceError) => err.code === grpc.status.INVALID_ARGUMENT,
  );
});

test('gRPC clients get grpc-status headers; a missing session is UNAUTHENTICATED', async () => {
  const response = await check(request({ 'content-type': 'application/grpc' }));
  assert.equal(response.status.code, 16);
  assert.equal(response.denied_response.status.code, 'Unauthorized');
  const headers = Object.fromEntries(
    response.denied_response.headers.map((h: { header: { key: string; value: string } }) => [
      h.header.key,
      h.header.value,
    ]),
  );
  assert.equal(headers['grpc-status'], '16');
});

test('a claim value with CR/LF never becomes a header', async () => {
  const decision = (await authorize({
    routeId: ROUTE,
    requestId: 'r',
    method: 'GET',
    scheme: 'https',
    host: 'app.test',
    path: '/',
    query: '',
    headers: { cookie: `_portcullis=${handles.issue('evil')}`, 'x-dept': 'spoofed' },
    sourceIp: '10.0.0.1',
  })) as Extract<Decision, { kind: 'allow' }>;
  assert.equal(decision.kind, 'allow');
  for (const [, value] of decision.setHeaders) assert.doesNotMatch(value, /[\r\n\0]/);
  assert.ok(!decision.setHeaders.some(([name]) => name === 'x-dept'));
  assert.ok(decision.removeHeaders.includes('x-dept'), 'the client-supplied copy is removed');
  assert.ok(decision.removeHeaders.includes('cookie'));
});

test('200 concurrent Checks all answer, each with a decision', async () => {
  const cookie = `_portcullis=${handles.issue('evil')}`;
  const responses = await Promise.all(
    Array.from({ length: 200 }, (_, i) => check(request(i % 2 === 0 ? { cookie } : {}))),
  );
  assert.equal(responses.filter((r) => r.ok_response !== undefined).length, 100);
  assert.equal(responses.filter((r) => r.denied_response !== undefined).length, 100);
});

test('with a fresh cached assertion the decision is synchronous; the first one signs', async () => {
  const ask = (): ReturnType<typeof authorize> =>
    authorize({
      routeId: ROUTE,
      requestId: 'r',
      method: 'GET',
      scheme: 'https',
      host: 'sync.test',
      path: '/',
      query: '',
      headers: { cookie: `_portcullis=${handles.issue('evil')}` },
      sourceIp: '10.0.0.1',
    });
  const first = ask();
  assert.ok(first instanceof Promise, 'a new assertion is signed asynchronously');
  const signed = (await first) as Extract<Decision, { kind: 'allow' }>;
  const second = ask();
  assert.ok(!(second instanceof Promise), 'the cached assertion answers without a promise hop');
  const cached = second as Extract<Decision, { kind: 'allow' }>;
  const assertion = (decision: Extract<Decision, { kind: 'allow' }>): string | undefined =>
    decision.setHeaders.find(([name]) => name === 'x-portcullis-jwt-assertion')?.[1];
  assert.ok(assertion(signed));
  assert.equal(assertion(cached), assertion(signed));
});

/** An AuthorizeRequest for the fixture, with defaults a browser would send to app.test. */
function ask(overrides: Partial<AuthorizeRequest>): AuthorizeRequest {
  return {
    routeId: ROUTE,
    requestId: 'r',
    method: 'GET',
    scheme: 'https',
    host: 'app.test',
    path: '/',
    query: '',
    headers: { accept: 'text/html' },
    sourceIp: '10.0.0.1',
    ...overrides,
  };
}

const good: Session = {
  id: 'good',
  userId: 'ada',
  email: 'ada@example.com',
  emailVerified: true,
  name: 'Ada',
  groups: [],
  claims: { department: 'research' },
  issuedAt: 0,
  expiresAt: Number.MAX_SAFE_INTEGER,
  idpId: FIXTURE_IDP,
};

test('own endpoints: /.portcullis/* on a route host is allowed without a route id and carries the raw handle, nothing else', async () => {
  const handle = handles.issue('evil');
  const viaCookie = await authorize(
    ask({ routeId: undefined, path: '/.portcullis/user', headers: { cookie: `a=1; _portcullis=${handle}` } }),
  );
  assert.deepEqual(viaCookie, {
    kind: 'allow',
    setHeaders: [[OWN_SESSION_HEADER, handle]],
    removeHeaders: [],
    reasons: ['own-endpoint'],
  });
  const viaHeader = await authorize(
    ask({
      routeId: undefined,
      path: '/.portcullis/sign_out',
      headers: { authorization: 'Portcullis forged' },
    }),
  );
  assert.deepEqual(viaHeader.kind === 'allow' && viaHeader.setHeaders, [[OWN_SESSION_HEADER, 'forged']]);
  const none = await authorize(
    ask({ routeId: undefined, path: '/.portcullis/', headers: { [OWN_SESSION_HEADER]: 'client-sent' } }),
  );
  assert.deepEqual(none, {
    kind: 'allow',
    setHeaders: [],
    removeHeaders: [OWN_SESSION_HEADER],
    reasons: ['own-endpoint'],
  });
});

test('own endpoints: every path of the authenticate host (port and case ignored) is allowed; JWKS is still answered there', async () => {
  for (const host of ['auth.test', 'Auth.Test:8443']) {
    const decision = await authorize(
      ask({ routeId: undefined, host, path: '/oauth2/callback', query: 'code=x' }),
    );
    assert.equal(decision.kind, 'allow', host);
  }
  const jwks = await authorize(
    ask({ routeId: undefined, host: 'auth.test', path: '/.well-known/portcullis/jwks.json' }),
  );
  assert.deepEqual(jwks.reasons, ['no-jwks'], 'the JWKS branch answers (this fixture publishes none)');
  for (const host of ['app.test', 'auth.test.evil', 'x.auth.test', 'auth.tests:80']) {
    const decision = await authorize(ask({ routeId: undefined, host, path: '/oauth2/callback' }));
    assert.equal(decision.kind === 'deny' && decision.status, 404, host);
  }
});

test('a session made by another identity-provider client counts as no session', async () => {
  await sessions.put({ ...good, id: 'other-idp', idpId: 'idp-other' });
  const decision = await authorize(
    ask({ headers: { accept: 'text/html', cookie: `_portcullis=${handles.issue('other-idp')}` } }),
  );
  assert.equal(decision.kind === 'deny' && decision.status, 302);
  assert.equal(decision.reasons[0], 'session-other-idp');
  await sessions.put(good);
  const same = await authorize(ask({ headers: { cookie: `_portcullis=${handles.issue('good')}` } }));
  assert.equal(same.kind, 'allow');
});

test('browsers go to sign in with the original URL whole: scheme, host with its port, path and query', async () => {
  const decision = await authorize(
    ask({ scheme: 'http', host: 'app.test:8443', path: '/a/b', query: 'x=1&y=%2F' }),
  );
  assert.equal(decision.kind === 'deny' && decision.status, 302);
  const location = decision.kind === 'deny' ? new Map(decision.headers).get('location') : undefined;
  const original = 'http://app.test:8443/a/b?x=1&y=%2F';
  assert.equal(location, signInLocation(FIXTURE_AUTHENTICATE_URL, original));
  const url = new URL(location ?? '');
  assert.equal(url.origin + url.pathname, 'https://auth.test/.portcullis/sign_in');
  assert.deepEqual([...url.searchParams], [[REDIRECT_URI_PARAM, original]], 'one parameter, no nesting');
});

test('without an authenticate URL a sign-in is a 500 that says sign-in is not configured', async () => {
  const unconfigured = authzFixture(7, { authenticateUrl: null });
  for (const accept of ['text/html', 'application/json']) {
    const decision = await unconfigured.authorize(ask({ headers: { accept } }));
    assert.equal(decision.kind === 'deny' && decision.status, 500, accept);
    assert.match(decision.kind === 'deny' ? decision.body : '', /Sign-in is not configured/);
    assert.equal(decision.reasons[0], 'sign-in-not-configured');
  }
});

test('the assertion names the request host with its port; jwt_issuer_format uri makes iss a URL', async () => {
  const payloadOf = async (fixture: ReturnType<typeof authzFixture>, host: string): Promise<JWTPayload> => {
    await fixture.sessions.put(good);
    const decision = await fixture.authorize(
      ask({ host, headers: { cookie: `_portcullis=${fixture.handles.issue('good')}` } }),
    );
    assert.equal(decision.kind, 'allow');
    const token = decision.kind === 'allow' ? new Map(decision.setHeaders).get(ASSERTION_HEADER) : undefined;
    return decodeJwt(token ?? '');
  };
  const hostOnly = await payloadOf(authzFixture(7), 'App.Test:8443');
  assert.equal(hostOnly.iss, 'app.test:8443');
  assert.equal(hostOnly.aud, 'app.test:8443');
  const defaultPort = await payloadOf(authzFixture(7), 'app.test:443');
  assert.equal(defaultPort.aud, 'app.test');
  const uri = await payloadOf(authzFixture(7, { issuerFormat: 'uri' }), 'app.test:8443');
  assert.equal(uri.iss, 'https://app.test:8443/');
  assert.equal(uri.aud, 'app.test:8443');
});

// The authorizer as Envoy's ext_authz sees it, without Envoy: Check requests over a real gRPC
// connection, malformed requests, client kinds, header stripping and header-injection defence.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { registerAuthorizationService } from '../../../src/authorize/ext-authz/authorization-service.js';
import { messageType } from '../../../src/xds/codec/proto-root.js';
import { authzFixture, FIXTURE_ROUTE } from '../../support/authz-fixture.js';
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
    name: 'M',
    groups: [],
    claims: { department: 'x\r\nX-Admin: 1' },
    issuedAt: 0,
    expiresAt: Date.now() + 60_000,
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

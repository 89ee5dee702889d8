// The lean node:http2 Check server against the grpc-js service: same answers to a grpc-js client,
// errors for garbage and unknown methods, and it keeps serving afterwards.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { registerAuthorizationService } from '../../../src/authorize/ext-authz/authorization-service.js';
import { startH2CheckServer, type H2CheckServer } from '../../../src/authorize/ext-authz/h2-check-server.js';
import { silentLogger } from '../../../src/shared/logger.js';
import { messageType } from '../../../src/xds/codec/proto-root.js';
import { authzFixture, FIXTURE_ROUTE } from '../../support/authz-fixture.js';

const CHECK = '/envoy.service.auth.v3.Authorization/Check';
const { sessions, handles, authorize } = authzFixture(9);
const ROUTE = FIXTURE_ROUTE;

let grpcServer: grpc.Server;
let lean: H2CheckServer;
let grpcClient: grpc.Client;
let leanClient: grpc.Client;

before(async () => {
  await sessions.put({
    id: 'alice',
    userId: 'alice',
    email: 'a@example.com',
    name: 'A',
    groups: [],
    claims: { department: 'research' },
    issuedAt: 0,
    expiresAt: Date.now() + 60_000,
  });
  grpcServer = new grpc.Server();
  registerAuthorizationService(grpcServer, authorize, silentLogger);
  const port = await new Promise<number>((resolve, reject) =>
    grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    ),
  );
  lean = await startH2CheckServer({ host: '127.0.0.1', port: 0, authorize, logger: silentLogger });
  grpcClient = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  leanClient = new grpc.Client(`127.0.0.1:${lean.port}`, grpc.credentials.createInsecure());
});

after(async () => {
  grpcClient.close();
  leanClient.close();
  grpcServer.forceShutdown();
  await lean.close();
});

/** Sends raw bytes on `path` and resolves with the raw response bytes (or rejects with the error). */
function call(client: grpc.Client, bytes: Uint8Array, path = CHECK): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      path,
      (value: Uint8Array) => Buffer.from(value),
      (value: Buffer) => value,
      bytes,
      (err, response) => (err ? reject(err) : resolve(response as Buffer)),
    );
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded protobufjs objects are untyped trees
function decoded(bytes: Buffer): Record<string, any> {
  const type = messageType('envoy.service.auth.v3.CheckResponse');
  return type.toObject(type.decode(bytes), { enums: String }) as Record<string, unknown>;
}

function request(headers: Record<string, string>): Uint8Array {
  const type = messageType('envoy.service.auth.v3.CheckRequest');
  return type
    .encode(
      type.fromObject({
        attributes: {
          request: {
            http: { id: 'req-1', method: 'GET', host: 'app.test', path: '/x', scheme: 'https', headers },
          },
          context_extensions: { route_id: ROUTE },
          source: { address: { socket_address: { address: '10.0.0.1', port_value: 5555 } } },
        },
      }),
    )
    .finish();
}

test('an allow and a deny are answered exactly as the grpc-js service answers them', async () => {
  const allow = request({ cookie: `_portcullis=${handles.issue('alice')}`, 'x-request-id': 'r1' });
  const deny = request({ 'x-request-id': 'r2' });
  for (const bytes of [allow, deny]) {
    // One after the other: the second hits the assertion cache, so both carry the same JWT.
    const expected = await call(grpcClient, bytes);
    const actual = await call(leanClient, bytes);
    assert.deepEqual(decoded(actual), decoded(expected));
  }
  assert.ok(decoded(await call(leanClient, allow)).ok_response, 'the session is allowed');
  assert.equal(
    decoded(await call(leanClient, deny)).status.code,
    7,
    'no session: a browser is denied (redirect to sign-in)',
  );
});

test('garbage bytes get INVALID_ARGUMENT, as from grpc-js, and the server keeps serving', async () => {
  const garbage = Buffer.from([0xff, 0xff, 0xff, 0xff]);
  for (const client of [grpcClient, leanClient]) {
    await assert.rejects(
      call(client, garbage),
      (err: grpc.ServiceError) => err.code === grpc.status.INVALID_ARGUMENT,
    );
  }
  assert.equal(decoded(await call(leanClient, request({}))).status.code, 7);
});

test('an unknown method is UNIMPLEMENTED and the server keeps serving', async () => {
  await assert.rejects(
    call(leanClient, request({}), '/envoy.service.auth.v3.Authorization/Nope'),
    (err: grpc.ServiceError) => err.code === grpc.status.UNIMPLEMENTED,
  );
  assert.equal(decoded(await call(leanClient, request({}))).status.code, 7);
});

test('a failing authorizer is INTERNAL; malformed frames over raw h2 never crash the server', async () => {
  const failing = await startH2CheckServer({
    host: '127.0.0.1',
    port: 0,
    authorize: () => Promise.reject(new Error('boom')),
    logger: silentLogger,
  });
  const client = new grpc.Client(`127.0.0.1:${failing.port}`, grpc.credentials.createInsecure());
  try {
    await assert.rejects(
      call(client, request({})),
      (err: grpc.ServiceError) => err.code === grpc.status.INTERNAL,
    );
  } finally {
    client.close();
    await failing.close();
  }
  const http2 = await import('node:http2');
  const session = http2.connect(`http://127.0.0.1:${lean.port}`);
  const statusOf = (body: Buffer): Promise<string | undefined> =>
    new Promise((resolve, reject) => {
      const stream = session.request({
        ':method': 'POST',
        ':path': CHECK,
        'content-type': 'application/grpc',
        te: 'trailers',
      });
      let status: string | undefined;
      stream.on('response', (headers) => (status = headers['grpc-status'] as string | undefined));
      stream.on('trailers', (trailers) => (status = trailers['grpc-status'] as string | undefined));
      stream.on('error', reject);
      stream.on('close', () => resolve(status));
      stream.resume();
      stream.end(body);
    });
  try {
    assert.equal(await statusOf(Buffer.from([0, 0])), '13', 'truncated frame header');
    assert.equal(await statusOf(Buffer.from([1, 0, 0, 0, 1, 7])), '13', 'compressed');
    assert.equal(await statusOf(Buffer.from([0, 0x10, 0, 0, 0])), '8', 'over 1 MiB');
    assert.equal(await statusOf(Buffer.from([0, 0, 0, 0, 9, 1])), '13', 'length mismatch');
  } finally {
    session.close();
  }
  assert.equal(decoded(await call(leanClient, request({}))).status.code, 7);
});

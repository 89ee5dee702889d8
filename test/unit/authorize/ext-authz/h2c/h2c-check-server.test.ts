// The h2c Check server with real peers: grpc-js's client (same answers as the grpc-js service)
// and node:http2's client (nghttp2: Huffman, dynamic table, CONTINUATION, flow control).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import type { Decision } from '../../../../../src/authorize/decision.js';
import { registerAuthorizationService } from '../../../../../src/authorize/ext-authz/authorization-service.js';
import {
  startH2cCheckServer,
  type H2cCheckServer,
} from '../../../../../src/authorize/ext-authz/h2c/h2c-check-server.js';
import { silentLogger } from '../../../../../src/shared/logger.js';
import { messageType } from '../../../../../src/xds/codec/proto-root.js';
import { authzFixture, FIXTURE_ROUTE } from '../../../../support/authz-fixture.js';
import { waitFor } from '../../../../support/wait.js';
import { CHECK_HEADERS, grpcBody } from './raw-h2.js';

const CHECK = '/envoy.service.auth.v3.Authorization/Check';
const { sessions, handles, authorize } = authzFixture(9);

let grpcServer: grpc.Server;
let h2c: H2cCheckServer;
let grpcClient: grpc.Client;
let h2cClient: grpc.Client;

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
  h2c = await startH2cCheckServer({ host: '127.0.0.1', port: 0, authorize, logger: silentLogger });
  grpcClient = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  h2cClient = new grpc.Client(`127.0.0.1:${h2c.port}`, grpc.credentials.createInsecure());
});

after(async () => {
  grpcClient.close();
  h2cClient.close();
  grpcServer.forceShutdown();
  await h2c.close();
});

/** Sends raw bytes on `path` with grpc-js and resolves with the raw response bytes. */
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
          context_extensions: { route_id: FIXTURE_ROUTE },
          source: { address: { socket_address: { address: '10.0.0.1', port_value: 5555 } } },
        },
      }),
    )
    .finish();
}

/** One call over a node:http2 session: the gRPC status, the decoded response and the raw DATA. */
function http2Call(
  session: http2.ClientHttp2Session,
  body: Buffer,
  extraHeaders: Record<string, string> = {},
  method = 'POST',
): Promise<{ status: string | undefined; httpStatus: number | undefined; data: Buffer }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ...Object.fromEntries(CHECK_HEADERS.filter(([name]) => !name.startsWith(':'))),
      ':method': method,
      ':path': CHECK,
      ...extraHeaders,
    });
    let status: string | undefined;
    let httpStatus: number | undefined;
    const chunks: Buffer[] = [];
    stream.on('response', (headers) => {
      httpStatus = headers[':status'];
      status = headers['grpc-status'] as string | undefined;
    });
    stream.on('trailers', (trailers) => (status = trailers['grpc-status'] as string | undefined));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', reject);
    stream.on('close', () => resolve({ status, httpStatus, data: Buffer.concat(chunks) }));
    stream.end(body);
  });
}

/** The CheckResponse's status code of a call that ended in grpc-status 0. */
function denyCode(result: { status: string | undefined; data: Buffer }): number {
  assert.equal(result.status, '0');
  return decoded(result.data.subarray(5)).status.code as number;
}

test('allow and deny are answered exactly as the grpc-js service answers them', async () => {
  const allow = request({ cookie: `_portcullis=${handles.issue('alice')}`, 'x-request-id': 'r1' });
  const deny = request({ 'x-request-id': 'r2' });
  for (const bytes of [allow, deny]) {
    const expected = await call(grpcClient, bytes);
    const actual = await call(h2cClient, bytes);
    assert.ok(actual.equals(expected), 'byte-identical CheckResponse');
  }
  assert.ok(decoded(await call(h2cClient, allow)).ok_response, 'the session is allowed');
  assert.equal(decoded(await call(h2cClient, deny)).status.code, 7, 'no session: denied');
});

test('garbage is INVALID_ARGUMENT, another method UNIMPLEMENTED, and the server keeps serving', async () => {
  await assert.rejects(
    call(h2cClient, Buffer.from([0xff, 0xff, 0xff, 0xff])),
    (err: grpc.ServiceError) => err.code === grpc.status.INVALID_ARGUMENT,
  );
  await assert.rejects(
    call(h2cClient, request({}), '/envoy.service.auth.v3.Authorization/Nope'),
    (err: grpc.ServiceError) => err.code === grpc.status.UNIMPLEMENTED,
  );
  assert.equal(decoded(await call(h2cClient, request({}))).status.code, 7);
});

test('an authorizer that throws or rejects is INTERNAL (Envoy: 503); a resolving one is answered', async () => {
  const outcomes: (() => Decision | Promise<Decision>)[] = [
    () => {
      throw new Error('boom');
    },
    () => Promise.reject(new Error('boom')),
  ];
  for (const outcome of outcomes) {
    const failing = await startH2cCheckServer({
      host: '127.0.0.1',
      port: 0,
      authorize: outcome,
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
  }
  const later = await startH2cCheckServer({
    host: '127.0.0.1',
    port: 0,
    authorize: (req) => Promise.resolve(authorize(req)),
    logger: silentLogger,
  });
  const client = new grpc.Client(`127.0.0.1:${later.port}`, grpc.credentials.createInsecure());
  try {
    assert.equal(decoded(await call(client, request({}))).status.code, 7);
  } finally {
    client.close();
    await later.close();
  }
});

test('malformed gRPC framing gets a gRPC error; a non-gRPC request gets 415', async () => {
  const session = http2.connect(`http://127.0.0.1:${h2c.port}`);
  try {
    assert.equal((await http2Call(session, Buffer.from([0, 0]))).status, '13', 'truncated prefix');
    assert.equal((await http2Call(session, Buffer.from([1, 0, 0, 0, 1, 7]))).status, '12', 'compressed');
    assert.equal((await http2Call(session, Buffer.from([0, 0x10, 0, 0, 0]))).status, '8', 'over 1 MiB');
    assert.equal((await http2Call(session, Buffer.from([0, 0, 0, 0, 9, 1]))).status, '13', 'length mismatch');
    assert.equal((await http2Call(session, grpcBody(request({})), {}, 'PUT')).httpStatus, 415);
    assert.equal(denyCode(await http2Call(session, grpcBody(request({})))), 7, 'then a real Check');
  } finally {
    session.close();
  }
});

test('node:http2 as the peer: 1,500 calls with changing headers (dynamic table evicts), one over 40 KiB (CONTINUATION)', async () => {
  const session = http2.connect(`http://127.0.0.1:${h2c.port}`);
  try {
    const body = grpcBody(request({}));
    for (let index = 0; index < 1500; index++) {
      const extra = {
        [`x-pad-${index % 97}`]: `value-${index}-${'z'.repeat(index % 300)}`,
        'x-seq': String(index),
      };
      assert.equal(denyCode(await http2Call(session, body, extra)), 7, `call ${index}`);
    }
    const big = await http2Call(session, body, { 'x-big': 'b'.repeat(40 * 1024) });
    assert.equal(denyCode(big), 7, 'a 40 KiB header block arrives in HEADERS + CONTINUATION');
  } finally {
    session.close();
  }
});

test('a response larger than the frame size and the peer windows is split and waits for WINDOW_UPDATE', async () => {
  const big = 'x'.repeat(300_000);
  const server = await startH2cCheckServer({
    host: '127.0.0.1',
    port: 0,
    authorize: () => ({ kind: 'deny', status: 403, headers: [], body: big, reasons: ['big'] }),
    logger: silentLogger,
  });
  const session = http2.connect(`http://127.0.0.1:${server.port}`, { settings: { initialWindowSize: 1000 } });
  try {
    for (let round = 0; round < 3; round++) {
      const { status, data } = await http2Call(session, grpcBody(request({})));
      assert.equal(status, '0');
      const response = decoded(data.subarray(5));
      assert.equal(response.denied_response.body.length, big.length);
    }
  } finally {
    session.close();
    await server.close();
  }
});

test('a client that disconnects before its answer is ready leaves the server serving', async () => {
  let release: (() => void) | undefined;
  const server = await startH2cCheckServer({
    host: '127.0.0.1',
    port: 0,
    authorize: (req) =>
      new Promise<Decision>((resolve) => {
        release = () => resolve(authorize(req) as Decision);
      }),
    logger: silentLogger,
  });
  try {
    const session = http2.connect(`http://127.0.0.1:${server.port}`);
    const pending = http2Call(session, grpcBody(request({}))).catch(() => undefined);
    await waitFor(async () => release !== undefined, { what: 'the Check to reach the authorizer' });
    session.destroy();
    await pending;
    await waitFor(async () => server.connections.size === 0, { what: 'the server to see the close' });
    release?.();
    const again = http2.connect(`http://127.0.0.1:${server.port}`);
    const answer = http2Call(again, grpcBody(request({})));
    await waitFor(async () => server.connections.size === 1, { what: 'the second connection' });
    release?.();
    assert.equal(denyCode(await answer), 7);
    again.close();
  } finally {
    await server.close();
  }
});

// One gRPC port for ADS and Check: connections whose first request is Check go to the h2c server,
// everything else (other methods, a client that waits for the server's SETTINGS, non-h2c bytes)
// to grpc-js through its connection injector, which then sees the stream from byte 0.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import {
  listenSharedGrpcPort,
  ROUTED_LOG,
  type SharedGrpcListener,
} from '../../../../../src/authorize/ext-authz/h2c/shared-grpc-listener.js';
import * as frames from '../../../../../src/authorize/ext-authz/h2c/frame.js';
import { recordingLogger } from '../../../../../src/shared/logger.js';
import { CHECK_HEADERS, grpcBody, literalBlock, RawH2Client } from './raw-h2.js';

const logger = recordingLogger();
const grpcServer = new grpc.Server();
let listener: SharedGrpcListener;
const ECHO = '/test.Echo/Say';

before(async () => {
  grpcServer.register(
    ECHO,
    (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) =>
      callback(null, Buffer.concat([Buffer.from('grpc-js:'), call.request])),
    (value: Buffer) => value,
    (value: Buffer) => value,
    'unary',
  );
  listener = await listenSharedGrpcPort({
    host: '127.0.0.1',
    port: 0,
    grpcServer,
    check: {
      authorize: () => ({ kind: 'allow', setHeaders: [['x-by', 'h2c']], removeHeaders: [], reasons: [] }),
      logger,
    },
    logger,
  });
});

after(async () => {
  await listener.close();
  grpcServer.forceShutdown();
});

/** One unary call over a node:http2 session (it sends HEADERS at once, as Envoy does). */
function http2Call(
  session: http2.ClientHttp2Session,
  path: string,
  message: Buffer,
): Promise<{ status: string | undefined; message: Buffer }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ':method': 'POST',
      ':path': path,
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    let status: string | undefined;
    const chunks: Buffer[] = [];
    stream.on('response', (headers) => (status = headers['grpc-status'] as string | undefined));
    stream.on('trailers', (trailers) => (status = trailers['grpc-status'] as string | undefined));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', reject);
    stream.on('close', () => resolve({ status, message: Buffer.concat(chunks).subarray(5) }));
    stream.end(grpcBody(message));
  });
}

const routedTo = (): string[] =>
  logger.records.filter((r) => r.msg === ROUTED_LOG).map((r) => (r.obj as { served_by: string }).served_by);

test('a connection that starts with Check is served by h2c, one that starts with another method by grpc-js', async () => {
  const checks = http2.connect(`http://127.0.0.1:${listener.port}`);
  const others = http2.connect(`http://127.0.0.1:${listener.port}`);
  try {
    const answer = await http2Call(checks, '/envoy.service.auth.v3.Authorization/Check', Buffer.alloc(0));
    assert.equal(answer.status, '0');
    assert.ok(answer.message.includes(Buffer.from('x-by')), 'the h2c authorizer answered');
    const echo = await http2Call(others, ECHO, Buffer.from('hi'));
    assert.equal(String(echo.message), 'grpc-js:hi');
    assert.deepEqual(routedTo().slice(-2), ['h2c', 'grpc-js']);
    const later = await http2Call(checks, ECHO, Buffer.from('x'));
    assert.equal(later.status, String(grpc.status.UNIMPLEMENTED), 'other methods on an h2c connection');
  } finally {
    checks.close();
    others.close();
  }
});

test('grpc-js clients (they wait for the server SETTINGS) are served by grpc-js', async () => {
  const client = new grpc.Client(`127.0.0.1:${listener.port}`, grpc.credentials.createInsecure());
  try {
    const answer = await new Promise<Buffer>((resolve, reject) =>
      client.makeUnaryRequest(
        ECHO,
        (value: Buffer) => value,
        (value: Buffer) => value,
        Buffer.from('yo'),
        (err, response) => (err ? reject(err) : resolve(response as Buffer)),
      ),
    );
    assert.equal(String(answer), 'grpc-js:yo');
    assert.equal(routedTo().at(-1), 'grpc-js');
  } finally {
    client.close();
  }
});

test('a client that waits for the server SETTINGS, or sends no h2c at all, goes to grpc-js', async () => {
  const waiting = await RawH2Client.connect(listener.port);
  const settings = await waiting.waitForFrame(
    'grpc-js SETTINGS after the classification timeout',
    (f) => f.type === frames.FRAME_SETTINGS && f.flags === 0,
  );
  assert.ok(settings);
  assert.equal(routedTo().at(-1), 'grpc-js');
  // grpc-js read the preface and SETTINGS we sent before it took over: it answers a request.
  waiting.sendFrame(
    frames.FRAME_HEADERS,
    frames.FLAG_END_HEADERS,
    1,
    literalBlock(CHECK_HEADERS.map(([n, v]) => [n, n === ':path' ? ECHO : v])),
  );
  waiting.sendFrame(frames.FRAME_DATA, frames.FLAG_END_STREAM, 1, Buffer.from([0, 0, 0, 0, 2, 0x68, 0x69]));
  const data = await waiting.waitForFrame(
    'the grpc-js answer',
    (f) => f.type === frames.FRAME_DATA && f.streamId === 1,
  );
  assert.equal(data.payload.subarray(5).toString(), 'grpc-js:hi');
  waiting.destroy();
  const http1 = await RawH2Client.connect(listener.port, false);
  http1.send(Buffer.from('GET / HTTP/1.1\r\nhost: x\r\n\r\n'));
  await http1.waitForClose();
  assert.equal(routedTo().at(-1), 'grpc-js');
});

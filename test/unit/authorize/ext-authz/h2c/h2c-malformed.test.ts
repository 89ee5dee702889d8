// The h2c Check server against malformed and hostile HTTP/2 (raw bytes): each protocol error
// closes that one connection with GOAWAY and the RFC 9113 error code and logs a line; streams
// reset mid-request, truncated frames and abrupt disconnects are tolerated; the server keeps
// answering good requests on other connections throughout.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as frames from '../../../../../src/authorize/ext-authz/h2c/frame.js';
import {
  startH2cCheckServer,
  type H2cCheckServer,
} from '../../../../../src/authorize/ext-authz/h2c/h2c-check-server.js';
import { recordingLogger } from '../../../../../src/shared/logger.js';
import { messageType } from '../../../../../src/xds/codec/proto-root.js';
import { CHECK_HEADERS, grpcBody, literalBlock, RawH2Client } from './raw-h2.js';

const logger = recordingLogger();
let server: H2cCheckServer;
const allowAll = () => ({ kind: 'allow' as const, setHeaders: [], removeHeaders: [], reasons: [] });
const checkRequest = messageType('envoy.service.auth.v3.CheckRequest');
const BODY = grpcBody(checkRequest.encode(checkRequest.fromObject({})).finish());
const HEADERS_BLOCK = literalBlock(CHECK_HEADERS);
const { FLAG_END_HEADERS: END_HEADERS, FLAG_END_STREAM: END_STREAM } = frames;

before(async () => {
  server = await startH2cCheckServer({ host: '127.0.0.1', port: 0, authorize: allowAll, logger });
});

after(async () => {
  await server.close();
});

/** A full good Check on `streamId` of `client`; resolves when its trailers (END_STREAM) arrive. */
async function goodCheck(client: RawH2Client, streamId: number): Promise<void> {
  client.sendFrame(frames.FRAME_HEADERS, END_HEADERS, streamId, HEADERS_BLOCK);
  client.sendFrame(frames.FRAME_DATA, END_STREAM, streamId, BODY);
  await client.waitForFrame(
    `the answer on stream ${streamId}`,
    (f) => f.streamId === streamId && (f.flags & END_STREAM) !== 0,
  );
}

/** Another connection still gets answers. */
async function serverStillServes(): Promise<void> {
  const client = await RawH2Client.connect(server.port);
  await goodCheck(client, 1);
  client.destroy();
}

/** Sends `bytes` on a fresh connection (after the preface unless `preface` is false) and expects GOAWAY `code`. */
async function expectGoaway(bytes: Buffer[], code: number, preface = true): Promise<void> {
  const before = logger.records.filter((record) => record.level === 'warn').length;
  const client = await RawH2Client.connect(server.port, preface);
  client.send(...bytes);
  assert.equal(await client.goawayCode(), code);
  await client.waitForClose();
  const warnings = logger.records.filter((record) => record.level === 'warn');
  assert.ok(warnings.length > before, 'a log line says why');
  assert.equal((warnings.at(-1)?.obj as { h2_error_code?: number }).h2_error_code, code);
  await serverStillServes();
}

const frame = frames.frame;

test('settings are acknowledged, pings answered, and a padded, prioritized, split header block works', async () => {
  const client = await RawH2Client.connect(server.port);
  await client.waitForFrame(
    'SETTINGS ACK',
    (f) => f.type === frames.FRAME_SETTINGS && f.flags === frames.FLAG_ACK,
  );
  client.sendFrame(frames.FRAME_PING, 0, 0, Buffer.from('12345678'));
  const pong = await client.waitForFrame('PING ACK', (f) => f.type === frames.FRAME_PING);
  assert.equal(pong.flags, frames.FLAG_ACK);
  assert.equal(pong.payload.toString(), '12345678');
  const padded = Buffer.concat([
    Buffer.from([3]), // pad length
    Buffer.from([0, 0, 0, 0, 16]), // priority: depends on 0, weight 16
    HEADERS_BLOCK.subarray(0, 10),
    Buffer.alloc(3),
  ]);
  client.sendFrame(frames.FRAME_HEADERS, frames.FLAG_PADDED | frames.FLAG_PRIORITY, 1, padded);
  client.sendFrame(frames.FRAME_CONTINUATION, 0, 1, HEADERS_BLOCK.subarray(10, 20));
  client.sendFrame(frames.FRAME_CONTINUATION, END_HEADERS, 1, HEADERS_BLOCK.subarray(20));
  client.sendFrame(
    frames.FRAME_DATA,
    frames.FLAG_PADDED,
    1,
    Buffer.concat([Buffer.from([2]), BODY.subarray(0, 3), Buffer.alloc(2)]),
  );
  client.sendFrame(frames.FRAME_DATA, END_STREAM, 1, BODY.subarray(3));
  const trailers = await client.waitForFrame(
    'the trailers',
    (f) => f.streamId === 1 && (f.flags & END_STREAM) !== 0,
  );
  assert.ok(trailers.payload.includes(Buffer.from('grpc-status')));
  client.destroy();
});

test('a bad preface: GOAWAY PROTOCOL_ERROR', async () => {
  await expectGoaway([Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n')], frames.PROTOCOL_ERROR, false);
});

test('a first frame other than SETTINGS: GOAWAY PROTOCOL_ERROR', async () => {
  await expectGoaway(
    [frames.CLIENT_PREFACE, frame(frames.FRAME_PING, 0, 0, Buffer.alloc(8))],
    frames.PROTOCOL_ERROR,
    false,
  );
});

test('a frame over 16,384 octets: GOAWAY FRAME_SIZE_ERROR', async () => {
  await expectGoaway([frame(frames.FRAME_DATA, 0, 1, Buffer.alloc(16_385))], frames.FRAME_SIZE_ERROR);
});

test('a bad HPACK index: GOAWAY COMPRESSION_ERROR', async () => {
  await expectGoaway(
    [frame(frames.FRAME_HEADERS, END_HEADERS, 1, Buffer.from([0xff, 0x7f]))],
    frames.COMPRESSION_ERROR,
  );
});

test('CONTINUATION without HEADERS, or HEADERS interrupted: GOAWAY PROTOCOL_ERROR', async () => {
  await expectGoaway(
    [frame(frames.FRAME_CONTINUATION, END_HEADERS, 1, HEADERS_BLOCK)],
    frames.PROTOCOL_ERROR,
  );
  await expectGoaway(
    [frame(frames.FRAME_HEADERS, 0, 1, HEADERS_BLOCK.subarray(0, 5)), frame(frames.FRAME_DATA, 0, 1, BODY)],
    frames.PROTOCOL_ERROR,
  );
});

test('padding longer than the frame, DATA on stream 0, even or reused stream ids: GOAWAY PROTOCOL_ERROR or STREAM_CLOSED', async () => {
  await expectGoaway(
    [frame(frames.FRAME_DATA, frames.FLAG_PADDED, 1, Buffer.from([9, 1, 2]))],
    frames.PROTOCOL_ERROR,
  );
  await expectGoaway([frame(frames.FRAME_DATA, 0, 0, BODY)], frames.PROTOCOL_ERROR);
  await expectGoaway(
    [frame(frames.FRAME_HEADERS, END_HEADERS | END_STREAM, 2, HEADERS_BLOCK)],
    frames.PROTOCOL_ERROR,
  );
  const client = await RawH2Client.connect(server.port);
  await goodCheck(client, 1);
  client.sendFrame(frames.FRAME_HEADERS, END_HEADERS | END_STREAM, 1, HEADERS_BLOCK);
  assert.equal(await client.goawayCode(), frames.STREAM_CLOSED);
});

test('a connection window over 2^31-1: GOAWAY FLOW_CONTROL_ERROR', async () => {
  const increment = Buffer.alloc(4);
  increment.writeUInt32BE(0x7fffffff);
  await expectGoaway([frame(frames.FRAME_WINDOW_UPDATE, 0, 0, increment)], frames.FLOW_CONTROL_ERROR);
});

test('PUSH_PROMISE from a client, bad SETTINGS: connection errors', async () => {
  await expectGoaway(
    [frame(frames.FRAME_PUSH_PROMISE, END_HEADERS, 1, Buffer.alloc(4))],
    frames.PROTOCOL_ERROR,
  );
  await expectGoaway([frame(frames.FRAME_SETTINGS, 0, 0, Buffer.alloc(5))], frames.FRAME_SIZE_ERROR);
  const tooSmallFrame = Buffer.from([0, frames.SETTINGS_MAX_FRAME_SIZE, 0, 0, 0x10, 0]);
  await expectGoaway([frame(frames.FRAME_SETTINGS, 0, 0, tooSmallFrame)], frames.PROTOCOL_ERROR);
});

test('a stream reset mid-request is forgotten; the connection goes on', async () => {
  const client = await RawH2Client.connect(server.port);
  client.sendFrame(frames.FRAME_HEADERS, END_HEADERS, 1, HEADERS_BLOCK);
  client.sendFrame(frames.FRAME_DATA, 0, 1, BODY.subarray(0, 4));
  client.sendFrame(frames.FRAME_RST_STREAM, 0, 1, Buffer.from([0, 0, 0, frames.CANCEL]));
  await goodCheck(client, 3);
  assert.ok(!client.frames.some((f) => f.streamId === 1), 'nothing answered on the reset stream');
  assert.ok(!client.frames.some((f) => f.type === frames.FRAME_GOAWAY));
  client.destroy();
});

test('a truncated frame and then a disconnect: nothing breaks', async () => {
  const client = await RawH2Client.connect(server.port);
  client.send(frame(frames.FRAME_HEADERS, END_HEADERS, 1, HEADERS_BLOCK).subarray(0, 12));
  await client.waitForFrame('the server SETTINGS', (f) => f.type === frames.FRAME_SETTINGS);
  client.destroy();
  await serverStillServes();
});

test('streams over the concurrency limit are refused; header blocks over the limit close the connection', async () => {
  const never = () => new Promise<never>(() => {});
  const small = await startH2cCheckServer({
    host: '127.0.0.1',
    port: 0,
    authorize: never,
    logger,
    limits: { maxConcurrentStreams: 2, maxHeaderBlockBytes: 1024, connectionWindowBytes: 1 << 20 },
  });
  try {
    const client = await RawH2Client.connect(small.port);
    for (const id of [1, 3, 5]) {
      client.sendFrame(frames.FRAME_HEADERS, END_HEADERS, id, HEADERS_BLOCK);
      client.sendFrame(frames.FRAME_DATA, END_STREAM, id, BODY);
    }
    const refused = await client.waitForFrame(
      'RST_STREAM on stream 5',
      (f) => f.type === frames.FRAME_RST_STREAM,
    );
    assert.equal(refused.streamId, 5);
    assert.equal(refused.payload.readUInt32BE(0), frames.REFUSED_STREAM);
    const big = literalBlock([...CHECK_HEADERS, ['x-big', 'y'.repeat(2000)]]);
    client.sendFrame(frames.FRAME_HEADERS, 0, 7, big.subarray(0, 900));
    client.sendFrame(frames.FRAME_CONTINUATION, END_HEADERS, 7, big.subarray(900));
    assert.equal(await client.goawayCode(), frames.ENHANCE_YOUR_CALM);
    await client.waitForClose();
  } finally {
    await small.close();
  }
});

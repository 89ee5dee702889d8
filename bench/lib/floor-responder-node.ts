/**
 * The authorization benchmark's Node.js floor: `floor-responder.c` again, in Node.js. It speaks
 * the same minimal cleartext HTTP/2 (preface skipped, SETTINGS and PING acknowledged, windows
 * opened wide, request headers not decoded) and answers every request stream with the same unary
 * gRPC response, one socket write per read, on the same socket API Portcullis's h2c Check server
 * uses (`net`, a 'data' listener, `socket.write`). So what Envoy adds through it, minus what it
 * adds through the native responder, is the cost of answering from a Node.js event loop before
 * any decision work; Portcullis's own code is what it adds above this floor.
 *
 *   node --import tsx bench/lib/floor-responder-node.ts <check-response-file>
 *     listens on 127.0.0.1, an ephemeral port, printed as a line
 *
 * Benchmark use only: no HPACK, no flow control beyond opening the windows, no limits.
 */
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';

const FRAME_DATA = 0;
const FRAME_HEADERS = 1;
const FRAME_SETTINGS = 4;
const FRAME_PING = 6;
const FRAME_GOAWAY = 7;
const FRAME_WINDOW_UPDATE = 8;
const FLAG_END_STREAM = 1;
const FLAG_ACK = 1;
const FLAG_END_HEADERS = 4;
const PREFACE_BYTES = 24;
const FRAME_HEADER_BYTES = 9;
const MAX_FRAME_BYTES = 1 << 20;

/** `:status 200` (static index 8), `content-type: application/grpc` (name from static index 31). */
const RESPONSE_HEADERS = Buffer.concat([
  Buffer.from([0x88, 0x0f, 0x10, 16]),
  Buffer.from('application/grpc'),
]);
/** `grpc-status: 0`, a literal without indexing with a literal name. */
const OK_TRAILERS = Buffer.concat([
  Buffer.from([0x00, 11]),
  Buffer.from('grpc-status'),
  Buffer.from([1, 0x30]),
]);

function frameHeader(
  out: Buffer,
  at: number,
  length: number,
  type: number,
  flags: number,
  stream: number,
): number {
  out.writeUIntBE(length, at, 3);
  out[at + 3] = type;
  out[at + 4] = flags;
  out.writeUInt32BE(stream, at + 5);
  return at + FRAME_HEADER_BYTES;
}

/** The whole unary response for `stream`, built around the CheckResponse `message`. */
function answerFor(message: Buffer): (stream: number) => Buffer {
  const size = 3 * FRAME_HEADER_BYTES + RESPONSE_HEADERS.length + 5 + message.length + OK_TRAILERS.length;
  const template = Buffer.alloc(size);
  let at = frameHeader(template, 0, RESPONSE_HEADERS.length, FRAME_HEADERS, FLAG_END_HEADERS, 0);
  at += RESPONSE_HEADERS.copy(template, at);
  const dataAt = at;
  at = frameHeader(template, at, message.length + 5, FRAME_DATA, 0, 0);
  template[at] = 0;
  template.writeUInt32BE(message.length, at + 1);
  at += 5 + message.copy(template, at + 5);
  const trailersAt = at;
  at = frameHeader(template, at, OK_TRAILERS.length, FRAME_HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, 0);
  OK_TRAILERS.copy(template, at);
  return (stream) => {
    const out = Buffer.from(template);
    for (const frameAt of [0, dataAt, trailersAt]) out.writeUInt32BE(stream, frameAt + 5);
    return out;
  };
}

function serve(socket: Socket, answer: (stream: number) => Buffer): void {
  socket.setNoDelay(true);
  const hello = Buffer.alloc(2 * FRAME_HEADER_BYTES + 6 + 4);
  let o = frameHeader(hello, 0, 6, FRAME_SETTINGS, 0, 0);
  hello.writeUInt16BE(4, o); // SETTINGS_INITIAL_WINDOW_SIZE
  hello.writeUInt32BE(1 << 30, o + 2);
  o = frameHeader(hello, o + 6, 4, FRAME_WINDOW_UPDATE, 0, 0);
  hello.writeUInt32BE(0x7fffffff - 65535, o);
  socket.write(hello);
  let pending: Buffer = Buffer.alloc(0);
  let preface = PREFACE_BYTES;
  socket.on('data', (chunk: Buffer) => {
    let input = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    if (preface > 0) {
      const skip = Math.min(preface, input.length);
      input = input.subarray(skip);
      preface -= skip;
    }
    const out: Buffer[] = [];
    let at = 0;
    while (input.length - at >= FRAME_HEADER_BYTES) {
      const length = input.readUIntBE(at, 3);
      const type = input[at + 3] as number;
      const flags = input[at + 4] as number;
      const stream = input.readUInt32BE(at + 5) & 0x7fffffff;
      if (length > MAX_FRAME_BYTES) {
        socket.destroy();
        return;
      }
      if (input.length - at < FRAME_HEADER_BYTES + length) break;
      if (type === FRAME_SETTINGS && (flags & FLAG_ACK) === 0) {
        out.push(Buffer.from([0, 0, 0, FRAME_SETTINGS, FLAG_ACK, 0, 0, 0, 0]));
      } else if (type === FRAME_PING && (flags & FLAG_ACK) === 0 && length === 8) {
        const pong = Buffer.alloc(FRAME_HEADER_BYTES + 8);
        frameHeader(pong, 0, 8, FRAME_PING, FLAG_ACK, 0);
        input.copy(pong, FRAME_HEADER_BYTES, at + FRAME_HEADER_BYTES, at + FRAME_HEADER_BYTES + 8);
        out.push(pong);
      } else if (type === FRAME_GOAWAY) {
        socket.end();
        return;
      } else if (
        (type === FRAME_DATA || type === FRAME_HEADERS) &&
        (flags & FLAG_END_STREAM) !== 0 &&
        stream !== 0
      ) {
        out.push(answer(stream));
      }
      at += FRAME_HEADER_BYTES + length;
    }
    pending = input.subarray(at);
    if (out.length > 0) socket.write(out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out));
  });
  socket.on('error', () => socket.destroy());
}

const file = process.argv[2];
if (file === undefined) {
  process.stderr.write('usage: floor-responder-node <check-response-file>\n');
  process.exit(2);
}
const answer = answerFor(readFileSync(file));
const server = createServer((socket) => serve(socket, answer));
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => process.exit(0));

/**
 * The authorization benchmark's Node.js floor: `floor-responder.c` again, in Node.js. It speaks
 * the same minimal cleartext HTTP/2 (preface skipped, SETTINGS and PING acknowledged, windows
 * opened wide, request headers not decoded) and answers every request stream with the same unary
 * gRPC response, one socket write per read. It reads and writes through the socket API the h2c
 * Check server uses (`net`, a 'data' listener, `socket.write`) and builds its frames with that
 * server's own builders (`h2c/frame.ts`, `unaryOkResponse`), so its bytes are Portcullis's. What
 * Envoy adds through it, minus what it adds through the native responder, is the cost of
 * answering from a Node.js event loop before any decision work; what Portcullis adds above it is
 * Portcullis's own code.
 *
 *   node --import tsx bench/lib/floor-responder-node.ts <check-response-file>
 *     listens on 127.0.0.1, an ephemeral port, printed as a line
 *
 * Benchmark use only: no HPACK, no flow control beyond opening the windows, no limits.
 */
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import {
  DEFAULT_WINDOW_SIZE,
  FLAG_ACK,
  FLAG_END_STREAM,
  FRAME_DATA,
  FRAME_GOAWAY,
  FRAME_HEADERS,
  FRAME_HEADER_SIZE,
  FRAME_PING,
  FRAME_SETTINGS,
  MAX_WINDOW_SIZE,
  SETTINGS_ACK,
  SETTINGS_INITIAL_WINDOW_SIZE,
  frame,
  settingsFrame,
  windowUpdateFrame,
} from '../../src/authorize/ext-authz/h2c/frame.js';
import { unaryOkResponse } from '../../src/authorize/ext-authz/h2c/grpc-reply.js';

/** The client connection preface, skipped unread. */
const PREFACE_BYTES = 24;
/** Larger frames close the connection (a benchmark peer never sends them). */
const MAX_FRAME_BYTES = 1 << 20;

function serve(socket: Socket, message: Buffer): void {
  socket.setNoDelay(true);
  socket.write(
    Buffer.concat([
      settingsFrame([[SETTINGS_INITIAL_WINDOW_SIZE, 1 << 30]]),
      windowUpdateFrame(0, MAX_WINDOW_SIZE - DEFAULT_WINDOW_SIZE),
    ]),
  );
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
    while (input.length - at >= FRAME_HEADER_SIZE) {
      const length = input.readUIntBE(at, 3);
      const type = input[at + 3] as number;
      const flags = input[at + 4] as number;
      const stream = input.readUInt32BE(at + 5) & 0x7fffffff;
      if (length > MAX_FRAME_BYTES) {
        socket.destroy();
        return;
      }
      if (input.length - at < FRAME_HEADER_SIZE + length) break;
      const payload = input.subarray(at + FRAME_HEADER_SIZE, at + FRAME_HEADER_SIZE + length);
      if (type === FRAME_SETTINGS && (flags & FLAG_ACK) === 0) {
        out.push(SETTINGS_ACK);
      } else if (type === FRAME_PING && (flags & FLAG_ACK) === 0 && length === 8) {
        out.push(frame(FRAME_PING, FLAG_ACK, 0, payload));
      } else if (type === FRAME_GOAWAY) {
        socket.end();
        return;
      } else if (
        (type === FRAME_DATA || type === FRAME_HEADERS) &&
        (flags & FLAG_END_STREAM) !== 0 &&
        stream !== 0
      ) {
        out.push(unaryOkResponse(stream, message));
      }
      at += FRAME_HEADER_SIZE + length;
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
const message = readFileSync(file);
const server = createServer((socket) => serve(socket, message));
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => process.exit(0));

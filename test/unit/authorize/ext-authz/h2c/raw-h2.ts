// A raw HTTP/2 client for malformed-input tests: it writes exactly the bytes a test gives it and
// records every frame the server sends, so a test can wait for GOAWAY, RST_STREAM or an answer.
import net from 'node:net';
import {
  CLIENT_PREFACE,
  FRAME_HEADER_SIZE,
  frame,
} from '../../../../../src/authorize/ext-authz/h2c/frame.js';
import { waitFor } from '../../../../support/wait.js';

/** One frame received from the server. */
export interface ReceivedFrame {
  readonly type: number;
  readonly flags: number;
  readonly streamId: number;
  readonly payload: Buffer;
}

/** The Check method's request headers. */
export const CHECK_HEADERS: readonly (readonly [string, string])[] = [
  [':method', 'POST'],
  [':scheme', 'http'],
  [':path', '/envoy.service.auth.v3.Authorization/Check'],
  [':authority', 'portcullis'],
  ['content-type', 'application/grpc'],
  ['te', 'trailers'],
];

function hpackInteger(value: number, prefixBits: number, firstByteFlags: number): number[] {
  const max = (1 << prefixBits) - 1;
  if (value < max) return [firstByteFlags | value];
  const bytes = [firstByteFlags | max];
  let rest = value - max;
  while (rest >= 128) {
    bytes.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return bytes;
}

/** An HPACK block of literal fields without indexing and without Huffman coding. */
export function literalBlock(headers: readonly (readonly [string, string])[]): Buffer {
  const bytes: number[] = [];
  for (const [name, value] of headers) {
    bytes.push(0x00);
    for (const text of [name, value]) {
      const octets = Buffer.from(text, 'latin1');
      bytes.push(...hpackInteger(octets.length, 7, 0), ...octets);
    }
  }
  return Buffer.from(bytes);
}

/** A gRPC length-prefixed message. */
export function grpcBody(message: Uint8Array): Buffer {
  const body = Buffer.alloc(5 + message.length);
  body.writeUInt32BE(message.length, 1);
  body.set(message, 5);
  return body;
}

/** A raw connection: the preface and an empty SETTINGS are sent unless `preface` is false. */
export class RawH2Client {
  readonly frames: ReceivedFrame[] = [];
  closed = false;
  private pending = Buffer.alloc(0);

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.pending = Buffer.concat([this.pending, chunk]);
      while (this.pending.length >= FRAME_HEADER_SIZE) {
        const length = this.pending.readUIntBE(0, 3);
        if (this.pending.length < FRAME_HEADER_SIZE + length) break;
        this.frames.push({
          type: this.pending[3]!,
          flags: this.pending[4]!,
          streamId: this.pending.readUInt32BE(5) & 0x7fffffff,
          payload: this.pending.subarray(FRAME_HEADER_SIZE, FRAME_HEADER_SIZE + length),
        });
        this.pending = this.pending.subarray(FRAME_HEADER_SIZE + length);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => (this.closed = true));
  }

  static async connect(port: number, preface = true): Promise<RawH2Client> {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const client = new RawH2Client(socket);
    if (preface) client.send(CLIENT_PREFACE, frame(0x4, 0, 0, Buffer.alloc(0)));
    return client;
  }

  send(...chunks: Buffer[]): void {
    this.socket.write(Buffer.concat(chunks));
  }

  /** Sends one frame. */
  sendFrame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): void {
    this.send(frame(type, flags, streamId, payload));
  }

  /** Waits until a received frame matches, and returns it. */
  waitForFrame(what: string, match: (frame: ReceivedFrame) => boolean): Promise<ReceivedFrame> {
    return waitFor(async () => this.frames.find(match), { what, timeoutMs: 5000, intervalMs: 5 });
  }

  /** Waits for GOAWAY and returns its error code. */
  async goawayCode(): Promise<number> {
    const goaway = await this.waitForFrame('GOAWAY', (f) => f.type === 0x7);
    return goaway.payload.readUInt32BE(4);
  }

  waitForClose(): Promise<true> {
    return waitFor(async () => this.closed, {
      what: 'the server to close the connection',
      timeoutMs: 5000,
      intervalMs: 5,
    });
  }

  destroy(): void {
    this.socket.destroy();
  }
}

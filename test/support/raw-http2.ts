/**
 * Raw HTTP/2 for tests that must send what a client library would refuse to (malformed frames,
 * floods, fuzzed input) to the gRPC port. Frames are assembled and split here, in test code, from
 * RFC 9113 section 4.1; the product never parses HTTP/2 by hand.
 */
import net from 'node:net';
import { readFileSync } from 'node:fs';

/** HTTP/2 frame types (RFC 9113 section 6). */
export const FRAME = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

/** Frame flags used by the tests. */
export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 } as const;

/** The client connection preface. */
export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** One frame: its 9-byte header fields and payload. */
export interface RawFrame {
  length: number;
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
}

/** Encodes one frame; `length` defaults to the payload's (a test may lie about it). */
export function frame(
  type: number,
  flags: number,
  streamId: number,
  payload: Buffer = Buffer.alloc(0),
  length = payload.length,
): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(length & 0xffffff, 0, 3);
  header[3] = type & 0xff;
  header[4] = flags & 0xff;
  header.writeUInt32BE(streamId >>> 0, 5);
  return Buffer.concat([header, payload]);
}

/** Encodes `frames` in order (each with its own, possibly false, length field). */
export function encodeFrames(frames: readonly RawFrame[]): Buffer {
  return Buffer.concat(frames.map((f) => frame(f.type, f.flags, f.streamId, f.payload, f.length)));
}

/**
 * Splits well-formed HTTP/2 bytes (after the preface, if `bytes` starts with it) into frames; a
 * trailing partial frame is dropped. For bytes a test captured from a real client.
 */
export function splitFrames(bytes: Buffer): RawFrame[] {
  let offset = bytes.subarray(0, PREFACE.length).equals(PREFACE) ? PREFACE.length : 0;
  const frames: RawFrame[] = [];
  while (offset + 9 <= bytes.length) {
    const length = bytes.readUIntBE(offset, 3);
    if (offset + 9 + length > bytes.length) break;
    frames.push({
      length,
      type: bytes[offset + 3] ?? 0,
      flags: bytes[offset + 4] ?? 0,
      streamId: bytes.readUInt32BE(offset + 5),
      payload: Buffer.from(bytes.subarray(offset + 9, offset + 9 + length)),
    });
    offset += 9 + length;
  }
  return frames;
}

/** A header block of "literal never indexed, new name" fields (RFC 7541 6.2.3), no Huffman. */
export function headerBlock(fields: readonly (readonly [string, string])[]): Buffer {
  return Buffer.concat(
    fields.map(([name, value]) => {
      if (name.length >= 127 || value.length >= 127) throw new Error('headerBlock: field too long');
      return Buffer.concat([
        Buffer.from([0x10, name.length]),
        Buffer.from(name, 'latin1'),
        Buffer.from([value.length]),
        Buffer.from(value, 'latin1'),
      ]);
    }),
  );
}

/** The request headers of a gRPC call to `path`. */
export function grpcRequestHeaders(path: string): Buffer {
  return headerBlock([
    [':method', 'POST'],
    [':scheme', 'http'],
    [':path', path],
    [':authority', 'x'],
    ['content-type', 'application/grpc'],
    ['te', 'trailers'],
  ]);
}

/** How the server acted on what `sendRaw` sent. */
export type Outcome = 'answered' | 'refused' | 'closed' | 'no reply';

/**
 * Sends `bytes` on a fresh TCP connection, then a PING, and resolves when the server has acted on
 * them: it ACKed the PING (it read everything before it), sent GOAWAY (refused the connection) or
 * closed the connection; 'no reply' after `timeoutMs`. `frames` are the server's frames until then.
 */
export function exchangeRaw(
  port: number,
  bytes: Buffer,
  timeoutMs = 5000,
): Promise<{ outcome: Outcome; frames: RawFrame[] }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    const finish = (outcome: Outcome): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ outcome, frames: splitFrames(received) });
    };
    const timer = setTimeout(() => finish('no reply'), timeoutMs);
    socket.on('connect', () =>
      socket.write(Buffer.concat([bytes, frame(FRAME.PING, 0, 0, Buffer.alloc(8, 7))])),
    );
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      // Walk the server's frames (its own well-formed output) for the PING ACK or a GOAWAY.
      for (const { type, flags } of splitFrames(received)) {
        if (type === FRAME.GOAWAY) return finish('refused');
        if (type === FRAME.PING && (flags & FLAG.ACK) !== 0) return finish('answered');
      }
    });
    socket.on('error', () => finish('closed'));
    socket.on('close', () => finish('closed'));
  });
}

/** `exchangeRaw`, for its outcome only. */
export async function sendRaw(port: number, bytes: Buffer, timeoutMs = 5000): Promise<Outcome> {
  return (await exchangeRaw(port, bytes, timeoutMs)).outcome;
}

/** Resident set size of process `pid` in MiB (Linux `/proc`). */
export function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match?.[1] === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) / 1024;
}

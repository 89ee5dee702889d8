// The HPACK decoder and frame splitter against a real encoder: node:http2's client (nghttp2) sends
// requests to a raw socket; every header block it wrote (Huffman strings, dynamic-table entries,
// evictions, CONTINUATION) must decode to exactly the headers the client was given.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net, { type AddressInfo } from 'node:net';
import { FrameSplitter } from '../../../../../src/authorize/ext-authz/h2c/frame-splitter.js';
import { HpackDecoder } from '../../../../../src/authorize/ext-authz/h2c/hpack-decoder.js';
import { headerBlockFragment } from '../../../../../src/authorize/ext-authz/h2c/padding.js';
import { waitFor } from '../../../../support/wait.js';
import { Random, randomString } from '../codec-generators.js';

const FRAME_HEADERS = 0x1;
const FRAME_CONTINUATION = 0x9;
const END_HEADERS = 0x4;

test('every header block nghttp2 encodes decodes to the headers it was given', async () => {
  const decoder = new HpackDecoder();
  const splitter = new FrameSplitter(1 << 24);
  const decodedBlocks: [string, string][][] = [];
  let continuations = 0;
  let maxTableLength = 0;
  let pending: Buffer[] = [];
  const server = net.createServer((socket) => {
    socket.on('data', (chunk: Buffer) =>
      splitter.push(chunk, (type, flags, _streamId, payload) => {
        if (type !== FRAME_HEADERS && type !== FRAME_CONTINUATION) return;
        if (type === FRAME_CONTINUATION) continuations++;
        pending.push(type === FRAME_HEADERS ? headerBlockFragment(flags, payload) : payload);
        if (!(flags & END_HEADERS)) return;
        const block = Buffer.concat(pending);
        pending = [];
        const out: string[] = [];
        decoder.decode(block, 0, block.length, out);
        maxTableLength = Math.max(maxTableLength, decoder.tableLength);
        const pairs: [string, string][] = [];
        for (let index = 0; index < out.length; index += 2) pairs.push([out[index]!, out[index + 1]!]);
        decodedBlocks.push(pairs);
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const session = http2.connect(`http://127.0.0.1:${port}`);
  session.on('error', () => {});
  const random = new Random(4242);
  const sent: Record<string, string>[] = [];
  try {
    for (let index = 0; index < 400; index++) {
      const headers: Record<string, string> = {
        ':method': 'POST',
        ':path': `/svc/${index % 7}`,
        'content-type': 'application/grpc',
        [`x-h-${index % 23}`]: `${randomString(random, 30).replace(/[^\x21-\x7e]/g, 'a')}-${index}`,
        'x-static': 'same every time',
      };
      if (index === 399) headers['x-big'] = 'q'.repeat(40_000);
      sent.push(headers);
      const stream = session.request(headers, { endStream: true });
      stream.on('error', () => {});
      // nghttp2 limits concurrent streams only after the server's SETTINGS, which never come; pace
      // the client so it has written each block before the next request.
      await waitFor(async () => decodedBlocks.length === index + 1, { what: `header block ${index}` });
      stream.close();
    }
  } finally {
    session.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
  sent.forEach((headers, index) => {
    const got = Object.fromEntries(
      decodedBlocks[index]!.filter(([name]) => name !== ':scheme' && name !== ':authority'),
    );
    assert.deepEqual(got, headers, `block ${index}`);
  });
  assert.ok(maxTableLength > 10, 'the client indexed fields in the dynamic table');
  assert.ok(decoder.tableSize <= 4096);
  assert.ok(continuations > 0, 'the 40 KB header came in CONTINUATION frames');
});

// The gRPC port (ADS and ext_authz Check on `grpc_address`) survives hostile HTTP/2: a running
// Portcullis (the real command, `--without-envoy`, in its own process, so a crash is a crash and not
// an exception the test runner catches) gets the 172-byte packet that used to end it (a HEADERS for
// an unknown method followed at once by RST_STREAM, issue 22) and a few malformed HTTP/2
// sequences over raw TCP, and afterwards is still running and still answers ADS and Check. It also
// stays bounded (issue 23, item 2): a CONTINUATION flood, a header list past 64 KiB, 60 connections
// each sending a 4 MiB message without the credential, and 500 idle connections. The frames are
// assembled by hand (test/support/raw-http2.ts) because a client library would refuse to send most
// of them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { startAllInOne } from '../../src/cmd/all-in-one.js';
import { PortcullisError } from '../../src/shared/errors.js';
import { silentLogger } from '../../src/shared/logger.js';
import { CLUSTER_TYPE, TYPE_PREFIX } from '../../src/proto/type-urls.js';
import { SIGN_IN } from '../support/sign-in-config.js';
import { connectAds } from '../support/ads-client.js';
import { callCheck, CHECK_PATH } from '../support/check-client.js';
import { deriveGrpcCredential } from '../../src/contract/grpc-credential.js';
import { freePort, freePortPair } from '../support/ports.js';
import { waitFor } from '../support/wait.js';
import {
  exchangeRaw,
  frame,
  grpcRequestHeaders as requestHeaders,
  headerBlock,
  PREFACE,
  rssMiB,
  sendRaw,
} from '../support/raw-http2.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const ADS_DELTA_PATH = '/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources';
const SHARED_SECRET = Buffer.alloc(32, 3);
/** What the sidecar Envoy would present: derived from the config's shared_secret. */
const CREDENTIAL = deriveGrpcCredential(SHARED_SECRET);

// HTTP/2 frame types and flags (RFC 9113 section 6).
const DATA = 0x0;
const HEADERS = 0x1;
const RST_STREAM = 0x3;
const SETTINGS = 0x4;
const CONTINUATION = 0x9;
const END_STREAM = 0x1;
const END_HEADERS = 0x4;
const CANCEL = 0x8;

const rstStream = (streamId: number): Buffer => {
  const code = Buffer.alloc(4);
  code.writeUInt32BE(CANCEL);
  return frame(RST_STREAM, 0, streamId, code);
};

/** The packet of issue 22: preface, SETTINGS, HEADERS for an unknown method, RST_STREAM at once. */
const CRASH_PACKET = Buffer.concat([
  PREFACE,
  frame(SETTINGS, 0, 0),
  frame(HEADERS, END_HEADERS, 1, requestHeaders('/unknown.Service/Method')),
  rstStream(1),
]);

/**
 * Garbage after the preface. Read as HTTP/2 it is a frame of unknown type 0x20 and 4.6 MB, which
 * HTTP/2 says to skip (RFC 9113 section 4.1), so the server may keep reading rather than answer:
 * the connection idles until the server's idle timeout closes it.
 */
const GARBAGE = Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n\x00\xff\x13\x37', 'latin1');

/** Malformed sequences, each sent on its own connection after the preface and SETTINGS. */
const MALFORMED: Readonly<Record<string, Buffer>> = {
  'a frame longer than SETTINGS_MAX_FRAME_SIZE': frame(DATA, 0, 1, Buffer.alloc(0)).fill(0xff, 0, 3),
  'HEADERS on stream 0': frame(HEADERS, END_HEADERS | END_STREAM, 0, requestHeaders(CHECK_PATH)),
  'CONTINUATION without HEADERS': frame(CONTINUATION, END_HEADERS, 1, requestHeaders(CHECK_PATH)),
  'a header block with an index past both tables': frame(HEADERS, END_HEADERS, 1, Buffer.from([0xff, 0x7f])),
  'a Check whose message is cut short, then RST_STREAM': Buffer.concat([
    frame(HEADERS, END_HEADERS, 1, requestHeaders(CHECK_PATH)),
    frame(DATA, 0, 1, Buffer.from([0, 0, 0, 0x10, 0, 0x0a])),
    rstStream(1),
  ]),
  '1,000 HEADERS + RST_STREAM pairs (unknown method and Check)': Buffer.concat(
    Array.from({ length: 1000 }, (_, index) => {
      const streamId = 2 * index + 1;
      const path = index % 2 === 0 ? '/unknown.Service/Method' : CHECK_PATH;
      return Buffer.concat([
        frame(HEADERS, END_HEADERS, streamId, requestHeaders(path)),
        rstStream(streamId),
      ]);
    }),
  ),
};

let dir: string;
let child: ChildProcess;
let grpcPort: number;
let output = '';
let configPath: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'portcullis-grpc-robustness-'));
  grpcPort = await freePortPair();
  configPath = join(dir, 'config.yaml');
  writeFileSync(
    configPath,
    stringify({
      insecure_server: true,
      ...SIGN_IN,
      shared_secret: SHARED_SECRET.toString('base64'),
      address: `127.0.0.1:${await freePort()}`,
      grpc_address: `127.0.0.1:${grpcPort}`,
      envoy_admin_address: `127.0.0.1:${await freePort()}`,
      routes: [{ from: 'https://app.test', to: 'http://127.0.0.1:1', allowed_users: ['ada@example.com'] }],
    }),
  );
  child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cmd/main.ts', '--config', configPath, '--without-envoy'],
    { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`Portcullis exited: ${output}`);
      return output.includes('gRPC listening');
    },
    { what: 'Portcullis to listen on grpc_address', timeoutMs: 30_000 },
  );
});

after(async () => {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

function assertAlive(after: string): void {
  assert.equal(child.exitCode, null, `Portcullis exited after ${after}:\n${output.slice(-3000)}`);
  assert.equal(child.signalCode, null, `Portcullis was killed after ${after}`);
}

/** ADS and Check both answer; when they do not, says whether Portcullis exited, with its output. */
async function assertServing(after: string): Promise<void> {
  assertAlive(after);
  try {
    await adsAndCheckAnswer(after);
  } catch (err) {
    // A crash shows first as a refused connection: give the exit a moment to be reported.
    const exited = await waitFor(async () => child.exitCode !== null || child.signalCode !== null, {
      what: 'Portcullis to exit',
      timeoutMs: 2000,
    }).catch(() => false);
    if (exited) assertAlive(after);
    throw err;
  }
}

async function adsAndCheckAnswer(after: string): Promise<void> {
  const ads = connectAds(`127.0.0.1:${grpcPort}`, {
    mode: 'delta',
    nodeId: 'robustness',
    timeoutMs: 5000,
    credential: CREDENTIAL,
  });
  try {
    ads.subscribe(TYPE_PREFIX + CLUSTER_TYPE);
    const response = await ads.next();
    assert.equal(response.typeUrl, TYPE_PREFIX + CLUSTER_TYPE, `ADS answers after ${after}`);
    assert.ok(response.resources.length > 0, `ADS sends clusters after ${after}`);
  } finally {
    ads.close();
  }
  const decision = await callCheck(`127.0.0.1:${grpcPort}`, CREDENTIAL);
  assert.equal(decision.deniedStatus, 404, `Check answers after ${after} (unknown route: 404)`);
}

test('the 172-byte packet (HEADERS for an unknown method, then RST_STREAM) does not stop Portcullis', async () => {
  assert.equal(CRASH_PACKET.length, 172);
  await assertServing('nothing yet');
  for (let attempt = 0; attempt < 3; attempt++) {
    const outcome = await sendRaw(grpcPort, CRASH_PACKET);
    assert.notEqual(outcome, 'no reply', 'the server answers or closes, it does not hang');
    assertAlive(`the 172-byte packet (attempt ${attempt + 1})`);
  }
  await assertServing('the 172-byte packet');
});

test('malformed HTTP/2 sequences are refused on their own connection and stop nothing', async () => {
  const opening = Buffer.concat([PREFACE, frame(SETTINGS, 0, 0)]);
  await sendRaw(grpcPort, Buffer.concat([opening, GARBAGE]), 1000);
  assertAlive('garbage after the preface');
  for (const [name, bytes] of Object.entries(MALFORMED)) {
    const outcome = await sendRaw(grpcPort, Buffer.concat([opening, bytes]));
    assert.notEqual(outcome, 'no reply', `${name}: the server answers or closes, it does not hang`);
    assertAlive(name);
  }
  await assertServing('the malformed sequences');
});

test('a second Portcullis on the same grpc_address fails with GRPC_BIND_FAILED naming it', async () => {
  await assert.rejects(
    startAllInOne({ configPath, env: {}, logger: silentLogger, withoutEnvoy: true }),
    (err: unknown) =>
      err instanceof PortcullisError &&
      err.code === 'GRPC_BIND_FAILED' &&
      err.message.includes(`grpc_address 127.0.0.1:${grpcPort}`),
  );
  assertAlive('a second bind on its port');
});

/** Portcullis's RSS growth over `baseline` must stay under this many MiB in the bound tests. */
const RSS_BOUND_MIB = 100;

/**
 * Opens a connection (from `localAddress`, a loopback address) and writes `chunks` with
 * backpressure; resolves with the socket once written.
 */
async function writeAll(chunks: Iterable<Buffer>, localAddress = '127.0.0.1'): Promise<net.Socket> {
  const socket = net.connect({ port: grpcPort, host: '127.0.0.1', localAddress });
  socket.on('error', () => undefined);
  socket.on('data', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  for (const chunk of chunks) {
    if (socket.destroyed) break;
    if (!socket.write(chunk)) {
      await new Promise((resolve) => {
        socket.once('drain', resolve);
        socket.once('close', resolve);
      });
    }
  }
  return socket;
}

test('a CONTINUATION flood (100,000 empty frames after an open HEADERS) ends its connection and holds nothing', async (t) => {
  const baseline = rssMiB(child.pid ?? 0);
  const empty = frame(CONTINUATION, 0, 1);
  function* flood(): Generator<Buffer> {
    yield Buffer.concat([PREFACE, frame(SETTINGS, 0, 0), frame(HEADERS, 0, 1, requestHeaders(CHECK_PATH))]);
    for (let sent = 0; sent < 100_000; sent += 1000)
      yield Buffer.concat(Array.from({ length: 1000 }, () => empty));
  }
  const socket = await writeAll(flood());
  await waitFor(async () => socket.destroyed || socket.readableEnded, {
    what: 'the server to end the flooding connection',
    timeoutMs: 5000,
  });
  socket.destroy();
  const grown = rssMiB(child.pid ?? 0) - baseline;
  t.diagnostic(`RSS +${grown.toFixed(1)} MiB`);
  assert.ok(grown < RSS_BOUND_MIB, `RSS grew by ${grown.toFixed(0)} MiB`);
  await assertServing('a CONTINUATION flood');
});

test('a header list past 64 KiB is refused on its stream or connection', async (t) => {
  const value = 'v'.repeat(120);
  const fields = Array.from({ length: 600 }, (_, index): [string, string] => [`x-h${index}`, value]);
  const block = Buffer.concat([requestHeaders(CHECK_PATH), headerBlock(fields)]);
  assert.ok(block.length > 70_000);
  const pieces = Array.from({ length: Math.ceil(block.length / 16_384) }, (_, index) =>
    block.subarray(index * 16_384, (index + 1) * 16_384),
  );
  const frames = pieces.map((piece, index) =>
    frame(index === 0 ? HEADERS : CONTINUATION, index === pieces.length - 1 ? END_HEADERS : 0, 1, piece),
  );
  const { outcome, frames: answer } = await exchangeRaw(
    grpcPort,
    Buffer.concat([PREFACE, frame(SETTINGS, 0, 0), ...frames]),
  );
  const onStream = answer.filter((f) => f.streamId === 1).map((f) => f.type);
  t.diagnostic(`outcome: ${outcome}; frames on the stream: ${onStream.join(',')}`);
  assert.notEqual(outcome, 'no reply');
  // Reset (RST_STREAM), or the whole connection refused (GOAWAY): never passed on to Check.
  assert.ok(outcome === 'refused' || onStream.includes(RST_STREAM), `stream 1 got ${onStream.join(',')}`);
  await assertServing('a header list past 64 KiB');
});

test('60 connections each sending a 4 MiB Check or ADS message without the credential hold no message bytes', async (t) => {
  const baseline = rssMiB(child.pid ?? 0);
  const size = 4 * 1024 * 1024 - 64;
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(size, 1);
  const body = frame(DATA, 0, 1, Buffer.alloc(16_384, 0x61));
  function* call(path: string): Generator<Buffer> {
    yield Buffer.concat([
      PREFACE,
      frame(SETTINGS, 0, 0),
      frame(HEADERS, END_HEADERS, 1, requestHeaders(path)),
    ]);
    yield frame(DATA, 0, 1, prefix);
    // Everything but the last bytes: the message stays incomplete, the stream open.
    for (let sent = 0; sent + 16_384 < size; sent += 16_384) yield body;
  }
  const sockets = await Promise.all(
    Array.from({ length: 60 }, (_, index) => writeAll(call(index % 2 === 0 ? CHECK_PATH : ADS_DELTA_PATH))),
  );
  try {
    const grown = rssMiB(child.pid ?? 0) - baseline;
    const sent = sockets.reduce((total, socket) => total + socket.bytesWritten, 0) / 2 ** 20;
    t.diagnostic(`${sent.toFixed(0)} MiB sent; RSS +${grown.toFixed(1)} MiB`);
    assert.ok(sent > 60 * 3.9, 'every connection sent its 4 MiB');
    assert.ok(grown < RSS_BOUND_MIB, `RSS grew by ${grown.toFixed(0)} MiB holding 60 x 4 MiB`);
    await assertServing('60 connections sending 4 MiB each');
  } finally {
    for (const socket of sockets) socket.destroy();
  }
});

test('500 idle connections cost little, and ADS and Check answer while they are open', async (t) => {
  const baseline = rssMiB(child.pid ?? 0);
  // From two addresses: one peer holds at most 256 connections (grpc-listener.ts).
  const sockets = await Promise.all(
    Array.from({ length: 500 }, (_, index) =>
      writeAll(index % 4 < 2 ? [] : [PREFACE, frame(SETTINGS, 0, 0)], `127.0.0.${2 + (index % 2)}`),
    ),
  );
  try {
    await assertServing('500 idle connections');
    assert.equal(sockets.filter((socket) => socket.destroyed).length, 0, 'the idle connections stay open');
    const grown = rssMiB(child.pid ?? 0) - baseline;
    t.diagnostic(`RSS +${grown.toFixed(1)} MiB`);
    assert.ok(grown < RSS_BOUND_MIB, `RSS grew by ${grown.toFixed(0)} MiB with 500 idle connections`);
  } finally {
    for (const socket of sockets) socket.destroy();
  }
});

// Fuzzing the gRPC port (issue 23, item 2): a running Portcullis with its Envoy (the real command,
// in its own process, so a crash is a crash) gets a few thousand mutated HTTP/2 and gRPC inputs on
// loopback, each on its own connection, and afterwards ADS, Check and a public route through Envoy
// all still answer. The inputs are real client sequences (preface, SETTINGS, HEADERS with the
// credential, DATA) captured from grpc-js calls to Check and to ADS (delta and state of the world),
// mutated by bit flips, truncation, duplicated, dropped and swapped frames, false lengths, random
// types, flags and stream ids, and inserted random frames. The PRNG is seeded: the seed is printed,
// and FUZZ_SEED=<seed> replays a run exactly (FUZZ_INPUTS sets how many inputs).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { CLUSTER_TYPE, TYPE_PREFIX } from '../../src/proto/type-urls.js';
import { connectAds, type AdsMode } from '../support/ads-client.js';
import { callCheck } from '../support/check-client.js';
import {
  spawnPortcullis,
  supervisedEnvoyCredential,
  type PortcullisProcess,
} from '../support/portcullis-process.js';
import { proxyRequest } from '../support/portcullis.js';
import { encodeFrames, FRAME, PREFACE, rssMiB, splitFrames, type RawFrame } from '../support/raw-http2.js';
import { seededRandom } from '../support/seeded-random.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstreams.js';

const SHARED_SECRET = Buffer.alloc(32, 9);
/** The all-in-one process's gRPC credential: random per start, read from its Envoy's bootstrap. */
let CREDENTIAL: string;
const SEED = Number(process.env['FUZZ_SEED'] ?? Date.now() % 0x7fffffff);
const INPUTS = Number(process.env['FUZZ_INPUTS'] ?? 3000);
/** Connections open at once while fuzzing. */
const CONCURRENCY = 64;
/** How long one input's connection may stay open before the test closes it. */
const PER_INPUT_MS = 1000;
/** The whole fuzzing phase must finish in this time (the test's own bound, not Portcullis's). */
const BUDGET_MS = 45_000;
/** Portcullis's RSS may grow by at most this much while fuzzing. */
const RSS_GROWTH_MIB = 200;

let upstream: EchoUpstream;
let portcullis: PortcullisProcess;

before(async () => {
  upstream = await startEchoUpstream({ id: 'up' });
  portcullis = await spawnPortcullis({
    shared_secret: SHARED_SECRET.toString('base64'),
    routes: [
      { from: 'https://public.test', to: upstream.url, allow_public_unauthenticated_access: true },
      { from: 'https://protected.test', to: upstream.url, allowed_users: ['ada@example.com'] },
    ],
  });
  CREDENTIAL = supervisedEnvoyCredential(portcullis.child.pid ?? -1);
});

after(async () => {
  await portcullis?.stop();
  await upstream?.stop();
});

/** The client's bytes of `exchange`, run through a recording TCP relay to the gRPC port. */
async function capture(exchange: (address: string) => Promise<void>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const sockets: net.Socket[] = [];
  const relay = net.createServer((client) => {
    const server = net.connect(portcullis.grpcPort, '127.0.0.1');
    sockets.push(client, server);
    client.on('data', (chunk: Buffer) => chunks.push(chunk));
    client.on('error', () => server.destroy());
    server.on('error', () => client.destroy());
    client.pipe(server);
    server.pipe(client);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const { port } = relay.address() as net.AddressInfo;
  try {
    await exchange(`127.0.0.1:${port}`);
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => relay.close(resolve));
  }
  return Buffer.concat(chunks);
}

/** Opens an ADS stream with the credential and resolves with how many clusters it was sent. */
async function adsClusters(address: string, mode: AdsMode): Promise<number> {
  const ads = connectAds(address, { mode, nodeId: 'fuzz', timeoutMs: 5000, credential: CREDENTIAL });
  try {
    ads.subscribe(TYPE_PREFIX + CLUSTER_TYPE);
    return (await ads.next()).resources.length;
  } finally {
    ads.close();
  }
}

type Random = () => number;
const pick = (random: Random, below: number): number => Math.floor(random() * below);
const randomBytes = (random: Random, length: number): Buffer =>
  Buffer.from(Array.from({ length }, () => pick(random, 256)));

/** Mutations of a frame list; each changes `frames` in place. */
const MUTATIONS: readonly ((frames: RawFrame[], random: Random) => void)[] = [
  function flipBit(frames, random) {
    const target = frames[pick(random, frames.length)];
    if (target === undefined || target.payload.length === 0) return;
    const index = pick(random, target.payload.length);
    target.payload = Buffer.from(target.payload);
    target.payload[index] = (target.payload[index] ?? 0) ^ (1 << pick(random, 8));
  },
  function truncatePayload(frames, random) {
    const target = frames[pick(random, frames.length)];
    if (target === undefined) return;
    target.payload = target.payload.subarray(0, pick(random, target.payload.length + 1));
    if (random() < 0.5) target.length = target.payload.length;
  },
  function duplicate(frames, random) {
    const index = pick(random, frames.length);
    const target = frames[index];
    if (target !== undefined) frames.splice(index, 0, { ...target });
  },
  function drop(frames, random) {
    frames.splice(pick(random, frames.length), 1);
  },
  function swap(frames, random) {
    const [a, b] = [pick(random, frames.length), pick(random, frames.length)];
    const [first, second] = [frames[a], frames[b]];
    if (first === undefined || second === undefined) return;
    frames[a] = second;
    frames[b] = first;
  },
  function falseLength(frames, random) {
    const target = frames[pick(random, frames.length)];
    if (target === undefined) return;
    const choices = [
      0,
      1,
      target.length - 1,
      target.length + 1,
      16_384,
      16_385,
      0xffffff,
      pick(random, 70_000),
    ];
    target.length = Math.max(0, choices[pick(random, choices.length)] ?? 0);
  },
  function randomType(frames, random) {
    const target = frames[pick(random, frames.length)];
    if (target !== undefined) target.type = random() < 0.8 ? pick(random, 10) : pick(random, 256);
  },
  function randomFlags(frames, random) {
    const target = frames[pick(random, frames.length)];
    if (target !== undefined) target.flags = pick(random, 256);
  },
  function randomStream(frames, random) {
    const target = frames[pick(random, frames.length)];
    const ids = [0, 1, 2, 3, 5, 0x7fffffff, 0x80000001, pick(random, 2 ** 31)];
    if (target !== undefined) target.streamId = ids[pick(random, ids.length)] ?? 0;
  },
  function insertRandomFrame(frames, random) {
    const payload = randomBytes(random, pick(random, 64));
    frames.splice(pick(random, frames.length + 1), 0, {
      length: payload.length,
      type: pick(random, 12),
      flags: pick(random, 256),
      streamId: pick(random, 8),
      payload,
    });
  },
];

/** One fuzzed input: a captured sequence with 1 to 4 mutations, sometimes cut short. */
function mutate(seedSequence: Buffer, random: Random): Buffer {
  const frames = splitFrames(seedSequence).map((f) => ({ ...f }));
  const count = 1 + pick(random, 4);
  for (let index = 0; index < count; index++) {
    MUTATIONS[pick(random, MUTATIONS.length)]?.(frames, random);
  }
  let bytes = Buffer.concat([PREFACE, encodeFrames(frames)]);
  if (random() < 0.05) {
    const index = pick(random, PREFACE.length);
    bytes[index] = (bytes[index] ?? 0) ^ 0x20;
  }
  if (random() < 0.2) bytes = bytes.subarray(0, pick(random, bytes.length));
  return bytes;
}

/**
 * Sends `bytes` on a new connection, half-closes it, and waits for the close (or closes it). From
 * 127.0.0.2, as another peer would: connections nghttp2 ended hold their descriptor until the
 * keepalive reaps them (15 s), and one peer holds at most 256 (grpc-listener.ts), so a fuzzer on
 * 127.0.0.1 would shut out the Portcullis clients the test then calls from there.
 */
function deliver(bytes: Buffer, random: Random): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect({ port: portcullis.grpcPort, host: '127.0.0.1', localAddress: '127.0.0.2' });
    const timer = setTimeout(() => socket.destroy(), PER_INPUT_MS);
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.on('data', () => undefined);
    // Half the inputs end the connection politely, half abort it after they are written.
    const abort = random() < 0.5;
    socket.on('connect', () => socket.write(bytes, () => (abort ? socket.destroy() : socket.end())));
  });
}

test(`a running Portcullis survives ${INPUTS} mutated HTTP/2 and gRPC inputs; ADS, Check and Envoy still answer`, async (t) => {
  t.diagnostic(`grpc-fuzz seed ${SEED}: replay with FUZZ_SEED=${SEED}`);
  console.log(
    `grpc-fuzz seed ${SEED} (replay: FUZZ_SEED=${SEED} node scripts/run-tests.mjs integration/grpc-fuzz.test.ts)`,
  );
  const seeds = [
    await capture(async (address) => assert.equal((await callCheck(address, CREDENTIAL)).deniedStatus, 404)),
    await capture(async (address) => assert.ok((await adsClusters(address, 'delta')) > 0)),
    await capture(async (address) => assert.ok((await adsClusters(address, 'sotw')) > 0)),
  ];
  for (const bytes of seeds) {
    const types = new Set(splitFrames(bytes).map((f) => f.type));
    assert.ok(types.has(FRAME.HEADERS) && types.has(FRAME.DATA), 'the capture holds a whole call');
  }
  const pid = portcullis.child.pid ?? 0;
  const baseline = rssMiB(pid);
  let peak = baseline;
  const random = seededRandom(SEED);
  const inputs = Array.from({ length: INPUTS }, (_, index) =>
    mutate(seeds[index % seeds.length] as Buffer, random),
  );
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let index = next++; index < inputs.length; index = next++) {
        await deliver(inputs[index] as Buffer, random);
        if (index % 200 === 0) {
          assert.ok(
            portcullis.alive(),
            `seed ${SEED}: Portcullis exited at input ${index}:\n${portcullis.output().slice(-3000)}`,
          );
          peak = Math.max(peak, rssMiB(pid));
        }
      }
    }),
  );
  const elapsed = performance.now() - started;
  t.diagnostic(
    `${INPUTS} inputs in ${Math.round(elapsed)} ms; RSS ${baseline.toFixed(0)} -> peak ${peak.toFixed(0)} MiB`,
  );
  assert.ok(elapsed < BUDGET_MS, `seed ${SEED}: fuzzing took ${elapsed} ms`);
  assert.ok(portcullis.alive(), `seed ${SEED}: Portcullis exited:\n${portcullis.output().slice(-3000)}`);
  assert.ok(peak - baseline < RSS_GROWTH_MIB, `seed ${SEED}: RSS grew from ${baseline} to ${peak} MiB`);

  const address = `127.0.0.1:${portcullis.grpcPort}`;
  assert.ok((await adsClusters(address, 'delta')) > 0, `seed ${SEED}: ADS (delta) answers`);
  assert.ok((await adsClusters(address, 'sotw')) > 0, `seed ${SEED}: ADS (state of the world) answers`);
  assert.equal(
    (await callCheck(address, CREDENTIAL)).deniedStatus,
    404,
    `seed ${SEED}: Check answers (unknown route: 404)`,
  );
  const publicRoute = await proxyRequest(portcullis.proxyPort, 'public.test', '/');
  assert.equal(publicRoute.status, 200, `seed ${SEED}: the public route answers through Envoy`);
  const protectedRoute = await proxyRequest(portcullis.proxyPort, 'protected.test', '/');
  assert.notEqual(protectedRoute.status, 503, `seed ${SEED}: Envoy's ext_authz still reaches Check`);
  assert.ok([302, 401].includes(protectedRoute.status), `anonymous: ${protectedRoute.status}`);
});

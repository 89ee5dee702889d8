// What an unauthenticated client can make the gRPC port hold in file descriptors and time (issue
// 33, item 5), against the real command in its own process under a 512-descriptor limit: a flood
// of 3,000 short malformed HTTP/2 exchanges leaves the descriptor count back near its baseline
// within seconds while gRPC health and metrics answer throughout; a client sending CONTINUATION
// frames without END_HEADERS is cut within 15 s; the 101st concurrent stream of a connection is
// refused; one peer address holds at most 256 connections. Through a real Envoy, ext_authz and
// ADS (a reload) keep working during a flood. Floods come from other loopback addresses
// (127.0.0.2, ...) than the Portcullis clients (127.0.0.1), as an attacker's would.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { parse, stringify } from 'yaml';
import { freePort } from '../support/ports.js';
import { spawnPortcullis, type PortcullisProcess } from '../support/portcullis-process.js';
import { proxyRequest } from '../support/portcullis.js';
import {
  exchangeRaw,
  FLAG,
  FRAME,
  frame,
  grpcRequestHeaders,
  headerBlock,
  PREFACE,
} from '../support/raw-http2.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstreams.js';
import { waitFor } from '../support/wait.js';

const SHARED_SECRET = Buffer.alloc(32, 5).toString('base64');
const HEALTH_CHECK = '/grpc.health.v1.Health/Check';
const FD_LIMIT = 512;
/** Open descriptors above the baseline that still count as "back to baseline". */
const FD_SLACK = 16;
/** What the flood may add at its peak: one peer's connection bound (256) and some slack. */
const FD_PEAK_BOUND = 256 + 32;
/** How long dead connections may hold descriptors after a flood (keepalive 5 s + 10 s, rounded). */
const RECOVERY_BOUND_MS = 20_000;
const REFUSED_STREAM = 0x7;
const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;

const OPENING = Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0)]);
/** Short malformed exchanges; the first (a header block indexing past both tables) used to leave CLOSE-WAIT. */
const MALFORMED = [
  Buffer.concat([OPENING, frame(FRAME.HEADERS, FLAG.END_HEADERS, 1, Buffer.from([0xff, 0x7f]))]),
  Buffer.concat([OPENING, frame(FRAME.HEADERS, FLAG.END_HEADERS, 0, grpcRequestHeaders(HEALTH_CHECK))]),
  Buffer.concat([OPENING, frame(FRAME.CONTINUATION, FLAG.END_HEADERS, 1, grpcRequestHeaders(HEALTH_CHECK))]),
  Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'),
];

let portcullis: PortcullisProcess;
let metricsPort: number;

before(async () => {
  metricsPort = await freePort();
  portcullis = await spawnPortcullis(
    {
      shared_secret: SHARED_SECRET,
      metrics_address: `127.0.0.1:${metricsPort}`,
      routes: [{ from: 'https://app.test', to: 'http://127.0.0.1:1', allowed_users: ['ada@example.com'] }],
    },
    { withoutEnvoy: true, fdLimit: FD_LIMIT },
  );
});

after(async () => {
  await portcullis?.stop();
});

function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** One gRPC health Check from 127.0.0.1 on a new channel; resolves when it answers (any serving status). */
async function healthAnswers(port: number): Promise<void> {
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  try {
    await new Promise<void>((resolve, reject) =>
      client.makeUnaryRequest(
        HEALTH_CHECK,
        (request: Buffer) => request,
        (response: Buffer) => response,
        Buffer.alloc(0),
        { deadline: Date.now() + 3000 },
        (err) => (err === null ? resolve() : reject(err)),
      ),
    );
  } finally {
    client.close();
  }
}

function metricsAnswer(): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port: metricsPort, path: '/metrics', timeout: 3000 }, (res) => {
      res.resume();
      res.on('end', () =>
        res.statusCode === 200 ? resolve() : reject(new Error(`metrics ${res.statusCode}`)),
      );
    });
    req.on('timeout', () => req.destroy(new Error('metrics timed out')));
    req.on('error', reject);
  });
}

/** Sends `bytes` from `localAddress`, half-closes, and waits at most 300 ms for the server's close. */
function exchangeFrom(port: number, localAddress: string, bytes: Buffer): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress });
    const timer = setTimeout(() => socket.destroy(), 300);
    socket.on('error', () => socket.destroy());
    socket.on('data', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.on('connect', () => socket.end(bytes));
  });
}

/**
 * `count` malformed exchanges from `localAddress`, 64 at a time, while `probe` runs every 250 ms;
 * resolves with the peak descriptor count of `pid` and the probe failures.
 */
async function flood(
  port: number,
  pid: number,
  localAddress: string,
  count: number,
  probe: () => Promise<void>,
): Promise<{ peak: number; failures: string[]; elapsedMs: number }> {
  let peak = openFds(pid);
  const failures: string[] = [];
  let done = false;
  const sampler = setInterval(() => (peak = Math.max(peak, openFds(pid))), 50);
  const probing = (async () => {
    while (!done) {
      await probe().catch((err: unknown) => failures.push(String(err)));
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  const started = performance.now();
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        for (let index = next++; index < count; index = next++) {
          await exchangeFrom(port, localAddress, MALFORMED[index % MALFORMED.length] as Buffer);
        }
      }),
    );
  } finally {
    done = true;
    clearInterval(sampler);
    await probing;
  }
  return { peak, failures, elapsedMs: performance.now() - started };
}

/** Waits until `pid` is back within FD_SLACK of `baseline`; resolves with how long that took. */
async function recovery(pid: number, baseline: number): Promise<number> {
  const started = performance.now();
  await waitFor(async () => openFds(pid) <= baseline + FD_SLACK, {
    what: `open descriptors back within ${FD_SLACK} of ${baseline}`,
    timeoutMs: RECOVERY_BOUND_MS,
    intervalMs: 100,
  });
  return performance.now() - started;
}

test('3,000 malformed exchanges: descriptors stay bounded and return to baseline; health and metrics answer throughout', async (t) => {
  const pid = portcullis.child.pid ?? 0;
  await healthAnswers(portcullis.grpcPort);
  const baseline = openFds(pid);
  const result = await flood(portcullis.grpcPort, pid, '127.0.0.2', 3000, async () => {
    await healthAnswers(portcullis.grpcPort);
    await metricsAnswer();
  });
  const recoveredMs = await recovery(pid, baseline);
  t.diagnostic(
    `3,000 exchanges in ${Math.round(result.elapsedMs)} ms; fds ${baseline} -> peak ${result.peak}; back in ${Math.round(recoveredMs)} ms`,
  );
  assert.deepEqual(result.failures, [], 'health and metrics answered during the flood');
  assert.ok(result.peak - baseline <= FD_PEAK_BOUND, `peak ${result.peak} over baseline ${baseline}`);
  assert.ok(portcullis.alive());
  await healthAnswers(portcullis.grpcPort);
  await metricsAnswer();
});

test('a client sending CONTINUATION frames without END_HEADERS is cut within 15 s; health answers meanwhile', async (t) => {
  // nghttp2 ends a connection after 8 CONTINUATION frames in a row, or at once for empty ones
  // (grpc-port-robustness.test.ts); a client pacing them keeps its header block open, and the
  // connection, unless something else ends it.
  const socket = net.connect(portcullis.grpcPort, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.on('data', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  let closed = false;
  socket.once('close', () => (closed = true));
  const started = performance.now();
  socket.write(Buffer.concat([OPENING, frame(FRAME.HEADERS, 0, 1, grpcRequestHeaders(HEALTH_CHECK))]));
  let sent = 0;
  const pacer = setInterval(() => {
    sent += 1;
    socket.write(frame(FRAME.CONTINUATION, 0, 1, headerBlock([[`x-${sent}`, 'v']])));
  }, 3000);
  const healthMs: number[] = [];
  try {
    while (!closed && performance.now() - started < 40_000) {
      const asked = performance.now();
      await healthAnswers(portcullis.grpcPort);
      healthMs.push(performance.now() - asked);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    clearInterval(pacer);
    socket.destroy();
  }
  const cutAfter = performance.now() - started;
  t.diagnostic(
    `cut after ${Math.round(cutAfter)} ms, ${sent} CONTINUATION frames sent; health answered in at most ${Math.round(Math.max(...healthMs))} ms`,
  );
  assert.ok(closed, 'the server closed the connection');
  // 15 s (keepalive 5 s + 10 s), plus slack for timers on a busy machine.
  assert.ok(cutAfter < 17_000, `cut after ${cutAfter} ms`);
});

test('the server advertises 100 concurrent streams and refuses the 101st', async () => {
  // 101 health Checks whose message never comes: each stream stays open.
  const headers = Array.from({ length: 101 }, (_, index) =>
    frame(FRAME.HEADERS, FLAG.END_HEADERS, 2 * index + 1, grpcRequestHeaders(HEALTH_CHECK)),
  );
  const { outcome, frames } = await exchangeRaw(portcullis.grpcPort, Buffer.concat([OPENING, ...headers]));
  assert.equal(outcome, 'answered');
  const settings = frames.find((f) => f.type === FRAME.SETTINGS && (f.flags & FLAG.ACK) === 0);
  assert.ok(settings !== undefined, 'the server sent its SETTINGS');
  const advertised = Array.from({ length: settings.payload.length / 6 }, (_, index) => ({
    id: settings.payload.readUInt16BE(index * 6),
    value: settings.payload.readUInt32BE(index * 6 + 2),
  })).find((setting) => setting.id === SETTINGS_MAX_CONCURRENT_STREAMS);
  assert.equal(advertised?.value, 100, 'SETTINGS_MAX_CONCURRENT_STREAMS');
  const resets = frames.filter((f) => f.type === FRAME.RST_STREAM);
  assert.deepEqual(
    resets.map((f) => [f.streamId, f.payload.readUInt32BE(0)]),
    [[201, REFUSED_STREAM]],
    'only the 101st stream is reset, with REFUSED_STREAM',
  );
});

test('one peer address holds at most 256 connections; other peers still connect', async (t) => {
  const pid = portcullis.child.pid ?? 0;
  await recovery(pid, openFds(pid));
  const baseline = openFds(pid);
  const open = (localAddress: string): Promise<net.Socket> =>
    new Promise((resolve) => {
      const socket = net.connect({ port: portcullis.grpcPort, host: '127.0.0.1', localAddress });
      socket.on('error', () => undefined);
      socket.on('data', () => undefined);
      socket.once('connect', () => {
        socket.write(OPENING);
        resolve(socket);
      });
    });
  const sockets = await Promise.all(Array.from({ length: 256 }, () => open('127.0.0.3')));
  try {
    await waitFor(async () => openFds(pid) >= baseline + 256 - FD_SLACK, {
      what: 'the server to hold 256 connections from 127.0.0.3',
    });
    const extra = await open('127.0.0.3');
    sockets.push(extra);
    await waitFor(async () => extra.destroyed || extra.readableEnded, {
      what: 'the 257th connection from 127.0.0.3 to be closed by the server',
      timeoutMs: 3000,
    });
    assert.equal(sockets.filter((socket) => socket.destroyed || socket.readableEnded).length, 1);
    await healthAnswers(portcullis.grpcPort);
    t.diagnostic(`fds with 256 connections from one peer: ${openFds(pid)} (baseline ${baseline})`);
  } finally {
    for (const socket of sockets) socket.destroy();
  }
  assert.match(portcullis.output(), /gRPC connection refused: too many open connections/);
});

test('through a real Envoy, ext_authz and ADS keep working during a flood', async (t) => {
  let upstream: EchoUpstream | undefined;
  let withEnvoy: PortcullisProcess | undefined;
  try {
    upstream = await startEchoUpstream({ id: 'up' });
    withEnvoy = await spawnPortcullis(
      {
        shared_secret: SHARED_SECRET,
        routes: [{ from: 'https://protected.test', to: upstream.url, allowed_users: ['ada@example.com'] }],
      },
      { fdLimit: FD_LIMIT },
    );
    const running = withEnvoy;
    const pid = running.child.pid ?? 0;
    const baseline = openFds(pid);
    let reloaded = false;
    const config = parse(readFileSync(running.configPath, 'utf8')) as { routes: unknown[] };
    const result = await flood(running.grpcPort, pid, '127.0.0.2', 3000, async () => {
      // ext_authz: an anonymous request to the protected route is sent to sign in, never a 503.
      const anonymous = await proxyRequest(running.proxyPort, 'protected.test', '/');
      assert.ok([302, 401].includes(anonymous.status), `protected route answered ${anonymous.status}`);
      if (!reloaded) {
        reloaded = true;
        config.routes.push({
          from: 'https://public.test',
          to: upstream?.url,
          allow_public_unauthenticated_access: true,
        });
        writeFileSync(running.configPath, stringify(config));
      }
    });
    // ADS: the route added by the reload during the flood reaches Envoy.
    const publicRoute = await waitFor(
      async () => (await proxyRequest(running.proxyPort, 'public.test', '/')).status === 200,
      { what: 'the reloaded public route to answer through Envoy', timeoutMs: 20_000 },
    );
    assert.ok(publicRoute);
    const recoveredMs = await recovery(pid, baseline);
    t.diagnostic(
      `with Envoy: fds ${baseline} -> peak ${result.peak}; back in ${Math.round(recoveredMs)} ms; ${Math.round(result.elapsedMs)} ms flood`,
    );
    assert.deepEqual(result.failures, [], 'ext_authz answered during the flood');
    assert.ok(result.peak - baseline <= FD_PEAK_BOUND, `peak ${result.peak} over baseline ${baseline}`);
  } finally {
    await withEnvoy?.stop();
    await upstream?.stop();
  }
});

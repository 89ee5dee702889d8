/**
 * ext_authz transport cost: the grpc-js Authorization service against the hand-rolled h2c Check
 * server (`src/authorize/ext-authz/h2c/`), same authorizer and same CheckRequest
 * bytes. The servers run in a forked child (`--role=server`) holding the decision fixture
 * (`authz-fixture.ts`: 10,000 routes, 100,000 sessions); this process drives them over loopback
 * with a `node:http2` client (one HTTP/2 connection per server, as an Envoy worker holds one),
 * `--concurrency` calls in flight (default 1 and 16), `--seconds` per run after a warm-up, the two
 * servers alternating for `--rounds` rounds. Per run: CPU per Check (the child's
 * `process.cpuUsage()` delta / calls, so the client's CPU is not counted), p50/p99 latency and
 * calls per second; then medians over rounds.
 *
 *   node --import tsx bench/lib/authz-h2.ts --routes=10000 --sessions=100000 --seconds=3 --rounds=3
 */
import { fork, type ChildProcess } from 'node:child_process';
import http2 from 'node:http2';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { registerAuthorizationService } from '../../src/authorize/ext-authz/authorization-service.js';
import { readCheckRequest } from '../../src/authorize/ext-authz/check-request-reader.js';
import { startH2cCheckServer } from '../../src/authorize/ext-authz/h2c/h2c-check-server.js';
import { silentLogger } from '../../src/shared/logger.js';
import { buildAuthzFixture } from './authz-fixture.js';
import { numberArg, parseArgs, progress } from './child.js';
import { writeResult } from './output.js';
import { round, summarize } from './stats.js';

const CHECK_PATH = '/envoy.service.auth.v3.Authorization/Check';
type ServerKind = 'grpc-js' | 'h2c';

/** The child's hello: where each server listens and the CheckRequests to send. */
interface Ready {
  readonly ports: Record<ServerKind, number>;
  readonly requests: readonly string[];
}

/** One measured run. */
export interface H2Run {
  readonly server: ServerKind;
  readonly concurrency: number;
  readonly calls: number;
  readonly callsPerSecond: number;
  readonly cpuUsPerCall: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly errors: number;
}

/** What this benchmark reports: every run, and medians per server and concurrency. */
export interface AuthzH2Result {
  readonly runs: readonly H2Run[];
  readonly medians: readonly Omit<H2Run, 'calls' | 'errors'>[];
}

async function serve(): Promise<void> {
  const args = parseArgs();
  const fixture = await buildAuthzFixture(
    numberArg(args, 'routes', 10_000),
    numberArg(args, 'sessions', 100_000),
    numberArg(args, 'distinct', 1000),
  );
  // Sign every session's assertion once, so both servers see the steady (cached) state.
  for (const bytes of fixture.bytes) {
    await fixture.authorize(readCheckRequest(bytes));
  }
  const server = new grpc.Server();
  registerAuthorizationService(server, fixture.authorize, silentLogger);
  const grpcPort = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) =>
      err ? reject(err) : resolve(port),
    ),
  );
  const h2c = await startH2cCheckServer({
    host: '127.0.0.1',
    port: 0,
    authorize: fixture.authorize,
    logger: silentLogger,
  });
  process.on('message', (message: string) => {
    if (message === 'cpu') {
      const usage = process.cpuUsage();
      process.send?.(usage.user + usage.system);
    }
  });
  const ready: Ready = {
    ports: { 'grpc-js': grpcPort, h2c: h2c.port },
    requests: fixture.bytes.map((bytes) => Buffer.from(bytes).toString('base64')),
  };
  process.send?.(ready);
}

function childCpuUs(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once('message', (value) => resolve(value as number));
    child.send('cpu');
  });
}

function frame(message: Buffer): Buffer {
  const framed = Buffer.alloc(5 + message.length);
  framed.writeUInt32BE(message.length, 1);
  message.copy(framed, 5);
  return framed;
}

/** One unary Check over `session`; resolves true when it ended with grpc-status 0. */
function callOnce(session: http2.ClientHttp2Session, body: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    const stream = session.request({
      ':method': 'POST',
      ':path': CHECK_PATH,
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    let ok = false;
    stream.on('trailers', (trailers) => (ok = trailers['grpc-status'] === '0'));
    stream.on('error', () => resolve(false));
    stream.on('close', () => resolve(ok));
    stream.resume();
    stream.end(body);
  });
}

/** `concurrency` loops of back-to-back Checks for `ms`; returns latencies (ms) and errors. */
async function drive(
  session: http2.ClientHttp2Session,
  bodies: readonly Buffer[],
  concurrency: number,
  ms: number,
): Promise<{ latencies: number[]; errors: number }> {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const deadline = performance.now() + ms;
  const loop = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const body = bodies[next++ % bodies.length] as Buffer;
      const start = performance.now();
      if (await callOnce(session, body)) latencies.push(performance.now() - start);
      else errors++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  return { latencies, errors };
}

async function main(): Promise<void> {
  const args = parseArgs();
  const seconds = numberArg(args, 'seconds', 3);
  const rounds = numberArg(args, 'rounds', 3);
  const concurrencies = (args.get('concurrency') ?? '1,16').split(',').map(Number);
  const child = fork(fileURLToPath(import.meta.url), [...process.argv.slice(2), '--role=server'], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 10 * 60_000);
  try {
    const ready = await new Promise<Ready>((resolve, reject) => {
      child.once('message', (message) => resolve(message as Ready));
      child.once('exit', (code) => reject(new Error(`server child exited with ${String(code)}`)));
    });
    const bodies = ready.requests.map((base64) => frame(Buffer.from(base64, 'base64')));
    const kinds: ServerKind[] = ['grpc-js', 'h2c'];
    const sessions = Object.fromEntries(
      kinds.map((kind) => [kind, http2.connect(`http://127.0.0.1:${ready.ports[kind]}`)]),
    ) as Record<ServerKind, http2.ClientHttp2Session>;
    for (const kind of kinds) {
      progress('authz-h2', `warming up ${kind}`);
      await drive(sessions[kind], bodies, 16, 1500);
    }
    const runs: H2Run[] = [];
    for (let r = 0; r < rounds; r++) {
      for (const concurrency of concurrencies) {
        for (const server of r % 2 === 0 ? kinds : [...kinds].reverse()) {
          const cpuBefore = await childCpuUs(child);
          const start = performance.now();
          const { latencies, errors } = await drive(sessions[server], bodies, concurrency, seconds * 1000);
          const elapsed = performance.now() - start;
          const cpu = (await childCpuUs(child)) - cpuBefore;
          const sorted = Float64Array.from(latencies).sort();
          const at = (q: number): number => (sorted[Math.floor(q * (sorted.length - 1))] ?? NaN) * 1000;
          const calls = latencies.length + errors;
          const run: H2Run = {
            server,
            concurrency,
            calls,
            callsPerSecond: round(calls / (elapsed / 1000)),
            cpuUsPerCall: round(cpu / calls),
            p50Us: round(at(0.5)),
            p99Us: round(at(0.99)),
            errors,
          };
          progress('authz-h2', JSON.stringify(run));
          runs.push(run);
        }
      }
    }
    for (const session of Object.values(sessions)) session.close();
    const medians = concurrencies.flatMap((concurrency) =>
      kinds.map((server) => {
        const mine = runs.filter((run) => run.server === server && run.concurrency === concurrency);
        const median = (pick: (run: H2Run) => number): number => summarize(mine.map(pick)).median;
        return {
          server,
          concurrency,
          callsPerSecond: median((run) => run.callsPerSecond),
          cpuUsPerCall: median((run) => run.cpuUsPerCall),
          p50Us: median((run) => run.p50Us),
          p99Us: median((run) => run.p99Us),
        };
      }),
    );
    const result: AuthzH2Result = { runs, medians };
    progress('authz-h2', JSON.stringify(medians));
    writeResult(args, result);
  } finally {
    clearTimeout(timer);
    child.kill();
  }
}

if (parseArgs().get('role') === 'server') await serve();
else await main();

/**
 * The tcp suite (issue 27, "Speed"): a TCP route through `portcullis tcp`, side by side with a
 * direct connection to the same upstream. Portcullis all-in-one runs in its own process with TLS on
 * its listener and one session in its store; the client is the product's command
 * (`bin/portcullis.mjs tcp ... --listen 127.0.0.1:P`) with that session's handle pre-seeded in its
 * token cache through the product's own token-cache module, so no sign-in runs.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SIGN_IN_YAML } from '../../test/support/sign-in-config.js';
import {
  echoRoundTrip,
  echoTransfer,
  rawConnect,
  startCountingEcho,
  transferOver,
  type TransferResult,
} from '../../test/support/tcp-parts.js';
import { generateTestCertificate } from '../../test/support/test-certs.js';
import { benchCredentials } from '../lib/bench-sessions.js';
import type { Context } from '../lib/context.js';
import { freePort } from '../lib/http.js';
import { startPortcullisChild } from '../lib/portcullis-process.js';
import { cli, productEnv, productModule } from '../lib/product.js';
import { until, whileRunning, type Started } from '../lib/processes.js';
import type { SuiteResult } from '../lib/report.js';
import { loopbackPorts, type Ports } from '../lib/serving.js';
import { round, summarize } from '../lib/stats.js';

const HOST = 'db.bench.test';
const AUTHORITY = `${HOST}:5432`;
/** A fixed `shared_secret`, so the session handle the child issues is one Portcullis accepts. */
const SHARED_SECRET = Buffer.alloc(32, 11).toString('base64');
const COOKIE_PREFIX = '_portcullis=';
const MIB = 1024 * 1024;
const TRANSFER_BYTES = 100 * MIB;
const THROUGHPUT_BUDGET = 0.7;

/** The parts of the product's token-cache module used here. */
interface TokenCacheModule {
  tokenCachePath(env: NodeJS.ProcessEnv): string;
  fileTokenCache(path: string): { put(host: string, token: string): Promise<void> };
}

function tcpConfig(ports: Ports, cert: { certFile: string; keyFile: string }, echoPort: number): string {
  return [
    `address: ${ports.address}`,
    `grpc_address: ${ports.grpcAddress}`,
    `envoy_admin_address: ${ports.adminAddress}`,
    'log_level: warn',
    `shared_secret: ${SHARED_SECRET}`,
    `certificate_file: ${cert.certFile}`,
    `certificate_key_file: ${cert.keyFile}`,
    SIGN_IN_YAML.trimEnd(),
    'routes:',
    `  - from: tcp+https://${AUTHORITY}`,
    `    to: tcp://127.0.0.1:${echoPort}`,
    '    allow_any_authenticated_user: true',
    '',
  ].join('\n');
}

/**
 * One repetition: the 100 MiB echo through `portcullis tcp`, directly, and through Envoy alone (this
 * process's own TLS CONNECT, no client process: what Envoy's tunnel costs by itself), ms each.
 */
interface Repetition {
  readonly tunnelMs: number;
  readonly directMs: number;
  readonly envoyMs: number;
}

/**
 * Tunnel throughput (100 MiB echoed, hashed both ways) and connection set-up time (connect to the
 * first echoed byte of a short message on a fresh connection), through the tunnel and directly,
 * in ABBA order; medians.
 */
export async function tcpSuite(context: Context): Promise<SuiteResult> {
  const reps = context.quick ? 2 : 6;
  const setups = context.quick ? 5 : 30;
  const dir = join(context.workDir, 'tcp');
  mkdirSync(dir, { recursive: true });
  const cert = generateTestCertificate(HOST);
  const echo = await startCountingEcho();
  const ports = await loopbackPorts();
  const configPath = join(dir, 'tcp.yaml');
  writeFileSync(configPath, tcpConfig(ports, cert, echo.port));
  let measured: Measured | undefined;
  try {
    const portcullis = await startPortcullisChild(context, {
      configPath,
      name: 'tcp',
      sessions: 1,
      secret: SHARED_SECRET,
      timeoutMs: 600_000,
    });
    let client: Started | undefined;
    try {
      const env = await clientEnv(context, dir);
      const listenPort = await freePort();
      const { command, args } = cli(context.target, [
        'tcp',
        AUTHORITY,
        '--via',
        `https://127.0.0.1:${ports.proxyPort}`,
        '--ca-cert',
        cert.certFile,
        '--no-browser',
        '--listen',
        `127.0.0.1:${listenPort}`,
      ]);
      client = context.groups.start({
        command,
        args,
        cwd: context.target.root,
        env: env.env,
        logFile: join(context.workDir, 'tcp-client.log'),
        timeoutMs: 600_000,
      });
      await whileRunning(
        portcullis.started,
        whileRunning(
          client,
          until(
            async () => (await echoRoundTrip(listenPort, 'ready?')) === 'ready?',
            'a round trip through the tunnel',
            {
              intervalMs: 100,
              timeoutMs: 60_000,
            },
          ),
        ),
      );
      const viaEnvoy = {
        port: ports.proxyPort,
        servername: HOST,
        ca: cert.certPem,
        authority: AUTHORITY,
        token: env.token,
      };
      const legs: Legs = {
        tunnel: () => timedTransfer(() => echoTransfer(listenPort, TRANSFER_BYTES, 120_000)),
        direct: () => timedTransfer(() => echoTransfer(echo.port, TRANSFER_BYTES, 120_000)),
        envoy: () =>
          timedTransfer(async () => {
            const tunnel = await rawConnect(viaEnvoy);
            if (tunnel.status !== 200) throw new Error(`Envoy answered the CONNECT with ${tunnel.status}`);
            return transferOver(tunnel.socket, TRANSFER_BYTES, 120_000);
          }),
      };
      measured = await measure(context, legs, { listen: listenPort, echo: echo.port }, { reps, setups });
    } finally {
      await client?.stop(5_000);
      await portcullis.stop();
    }
  } finally {
    await echo.close();
  }
  if (measured === undefined) throw new Error('nothing was measured');
  return result(reps, setups, measured);
}

/** What the runs measured: the transfers, and set-up times each way. */
interface Measured {
  readonly repetitions: readonly Repetition[];
  readonly setup: { readonly tunnel: readonly number[]; readonly direct: readonly number[] };
}

/** The three ways to the echo server, each a timed 100 MiB echo (ms). */
interface Legs {
  tunnel(): Promise<number>;
  direct(): Promise<number>;
  envoy(): Promise<number>;
}

/**
 * After a warm-up, `reps` transfers each way (the order reversed every other repetition), then
 * `setups` fresh connections through the tunnel and directly (alternating).
 */
async function measure(
  context: Context,
  legs: Legs,
  ports: { readonly listen: number; readonly echo: number },
  counts: { readonly reps: number; readonly setups: number },
): Promise<Measured> {
  // Warm-up: JIT on every side, Envoy's buffers.
  for (const leg of [legs.tunnel, legs.direct, legs.envoy]) await leg();
  const repetitions: Repetition[] = [];
  for (let rep = 0; rep < counts.reps; rep++) {
    const order =
      rep % 2 === 0 ? (['tunnel', 'direct', 'envoy'] as const) : (['envoy', 'direct', 'tunnel'] as const);
    const ms: Record<string, number> = {};
    for (const leg of order) ms[leg] = await legs[leg]();
    const repetition = { tunnelMs: ms.tunnel ?? NaN, directMs: ms.direct ?? NaN, envoyMs: ms.envoy ?? NaN };
    repetitions.push(repetition);
    context.progress(
      `tcp ${rep + 1}/${counts.reps}: 100 MiB echoed through portcullis tcp in ${Math.round(repetition.tunnelMs)} ms, directly in ${Math.round(repetition.directMs)} ms, through Envoy alone in ${Math.round(repetition.envoyMs)} ms`,
    );
  }
  const setup = { tunnel: [] as number[], direct: [] as number[] };
  for (let i = 0; i < counts.setups; i++) {
    const order = i % 2 === 0 ? (['tunnel', 'direct'] as const) : (['direct', 'tunnel'] as const);
    for (const which of order)
      setup[which].push(await timedRoundTrip(which === 'tunnel' ? ports.listen : ports.echo));
  }
  return { repetitions, setup };
}

/**
 * The client's environment: the product's, with its own config directory holding the session's
 * handle (bench session 0, the one the child put) as the token for HOST (what `portcullis login` would have cached) and no proxy.
 */
async function clientEnv(
  context: Context,
  dir: string,
): Promise<{ readonly env: NodeJS.ProcessEnv; readonly token: string }> {
  const cookie = (await benchCredentials(context.target.root, SHARED_SECRET)).cookie(0);
  if (!cookie.startsWith(COOKIE_PREFIX)) throw new Error(`a bench session cookie is not ${COOKIE_PREFIX}...`);
  const env: NodeJS.ProcessEnv = {
    ...productEnv(context.target),
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, 'config'),
    NO_PROXY: '*',
    no_proxy: '*',
  };
  const tokens = (await import(productModule(context.target.root, 'cli/token-cache'))) as TokenCacheModule;
  const token = cookie.slice(COOKIE_PREFIX.length);
  await tokens.fileTokenCache(tokens.tokenCachePath(env)).put(HOST, token);
  return { env, token };
}

/** The milliseconds of one TRANSFER_BYTES echo; a changed or missing byte fails the run. */
async function timedTransfer(run: () => Promise<TransferResult>): Promise<number> {
  const transfer = await run();
  if (transfer.receivedBytes !== TRANSFER_BYTES || transfer.receivedSha256 !== transfer.sentSha256)
    throw new Error(`the echo came back changed (${transfer.receivedBytes} bytes)`);
  return transfer.ms;
}

/** Milliseconds from connecting to 127.0.0.1:`port` to a short message's echo (a fresh connection). */
async function timedRoundTrip(port: number): Promise<number> {
  const started = performance.now();
  const answer = await echoRoundTrip(port, 'ping\n');
  if (answer !== 'ping\n') throw new Error(`the round trip through 127.0.0.1:${port} answered "${answer}"`);
  return performance.now() - started;
}

function result(reps: number, setups: number, { repetitions, setup }: Measured): SuiteResult {
  const ratio = summarize(repetitions.map((r) => r.directMs / r.tunnelMs));
  const mibPerS = (ms: number): number => round((2 * TRANSFER_BYTES) / MIB / (ms / 1000));
  const tunnelMs = summarize(repetitions.map((r) => r.tunnelMs));
  const directMs = summarize(repetitions.map((r) => r.directMs));
  const envoyMs = summarize(repetitions.map((r) => r.envoyMs));
  const envoyRatio = summarize(repetitions.map((r) => r.directMs / r.envoyMs));
  const tunnelSetup = summarize(setup.tunnel);
  const directSetup = summarize(setup.direct);
  return {
    name: 'tcp',
    how: `A TCP route (tcp+https://${AUTHORITY}, allow_any_authenticated_user) to a local TCP echo server; Portcullis all-in-one in its own process with TLS and one session; the product's \`portcullis tcp --listen\` with that session's handle pre-seeded in its token cache. ${reps} repetitions of a 100 MiB echo (hashed both ways) through the tunnel, directly, and through Envoy alone (the bench's own TLS CONNECT), the order reversed every other repetition; ${setups} fresh connections each way for set-up time. Medians.`,
    measurements: [
      {
        what: 'tunnel / direct throughput, 100 MiB echoed',
        budget: `>= ${THROUGHPUT_BUDGET}`,
        value: ratio.median,
        unit: 'x',
        pass: ratio.median >= THROUGHPUT_BUDGET,
        detail: `through the tunnel ${Math.round(tunnelMs.median)} ms (${mibPerS(tunnelMs.median)} MiB/s both ways), directly ${Math.round(directMs.median)} ms (${mibPerS(directMs.median)} MiB/s); per repetition ${ratio.runs.join(', ')}`,
      },
      {
        what: 'Envoy alone / direct throughput, 100 MiB echoed',
        budget: 'report',
        value: envoyRatio.median,
        unit: 'x',
        pass: null,
        detail: `the bench's own TLS CONNECT to Envoy, no client process (what Envoy's tunnel and TLS cost by themselves): ${Math.round(envoyMs.median)} ms (${mibPerS(envoyMs.median)} MiB/s); per repetition ${envoyRatio.runs.join(', ')}`,
      },
      {
        what: 'connection set-up through the tunnel (connect to first echo)',
        budget: 'report',
        value: tunnelSetup.median,
        unit: 'ms',
        pass: null,
        detail: `a fresh local connection: TLS to Envoy, CONNECT, ext_authz, upstream connect, one echo; directly ${directSetup.median} ms; tunnel min ${tunnelSetup.min} ms, max ${tunnelSetup.max} ms`,
      },
    ],
    data: { transferBytes: TRANSFER_BYTES, repetitions, setupMs: setup },
  };
}

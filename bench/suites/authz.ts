/**
 * Authorization speed through a real Envoy, side by side in one run: the same Envoy, the same
 * upstream, one route without ext_authz (`BARE_HOST`, public) and the same route through
 * Portcullis's ext_authz with a valid session cookie and the signed assertion on (`AUTHZ_HOST`).
 * Portcullis (ADS and ext_authz on its one gRPC port, Envoy supervised with concurrency 2) runs in
 * its own process (`bench/lib/authz-server.ts`) so its CPU is read there alone; the upstream (a
 * fixed 2-byte 200) runs here; load comes from wrk. Each repetition runs, alternately:
 *
 *   throughput   bare, then authz: wrk, `--connections` connections, `--seconds` each
 *   latency      bare, then authz, then fixed decision: wrk, one connection, `--seconds` each
 *
 * The fixed-decision route (`FIXED_DECISION_HOST`) is the authz route again, answered with the
 * first decision the server made for it: the ext_authz hop with the decision's own work (session
 * lookup, policy, assertion cache) taken out, to show how much of the added latency is the hop.
 *
 * The floor (`--floor`, on by default for the first transport): a second, static Envoy (same binary,
 * same concurrency, Portcullis's ext_authz settings) whose ext_authz calls a native responder that
 * does no work and answers every Check with the allow Portcullis gave (`authz-floor.ts`). Each
 * repetition also runs its bare and authz routes at one connection; their difference is what any
 * Check server, however fast, adds on this host. The same Envoy has a second listener whose
 * ext_authz calls the same do-nothing responder written in Node.js (`floor-responder-node.ts`):
 * its authz route at one connection, against the same bare route, is what answering from a
 * Node.js event loop adds before any decision work, so Portcullis's added latency minus it is
 * Portcullis's own code.
 *
 * ext_authz CPU per request = the server process's `process.cpuUsage()` delta (user + system)
 * over an authz run, divided by the Checks Envoy counted (`http.ingress.ext_authz.ok`) in it.
 *
 * `--transport=h2c` (default, production) serves the Checks from the h2c Check server on the shared
 * gRPC port; `--transport=grpc-js` from grpc-js. `--compare=grpc-js` repeats the whole measurement
 * with those transports after the first, each with its own Portcullis and Envoy, and reports them
 * in `comparisons`. `--profile=<dir>` writes CPU profiles of the Portcullis processes there.
 *
 *   node --import tsx bench/suites/authz.ts --reps=5 --seconds=4 --connections=16 [--compare=grpc-js] [--floor=0]
 */
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ASSERTION_HEADER } from '../../src/contract/authz.js';
import { adminRequest } from '../../src/envoy/admin.js';
import { numberArg, parseArgs, progress, REPO_ROOT } from '../lib/child.js';
import { AUTHZ_HOST, BARE_HOST, FIXED_DECISION_HOST } from '../lib/authz-config.js';
import { FLOOR_AUTHZ_HOST, FLOOR_BARE_HOST, startAuthzFloor, type AuthzFloor } from '../lib/authz-floor.js';
import type { AuthzServerMessage } from '../lib/authz-server.js';
import { requireWrk, runWrk, type WrkResult } from '../lib/authz-wrk.js';
import { writeResult } from '../lib/output.js';
import { round, summarize, type Summary } from '../lib/stats.js';

/** One repetition: both routes, loaded and at one connection. */
interface Repetition {
  readonly bare: WrkResult;
  readonly authz: WrkResult;
  readonly bareOneConnection: WrkResult;
  readonly authzOneConnection: WrkResult;
  /** One connection to the fixed-decision route (the hop without the decision's work). */
  readonly fixedDecisionOneConnection: WrkResult;
  /** One connection to the floor Envoy's bare and authz routes (absent without the floor). */
  readonly floorBareOneConnection?: WrkResult;
  readonly floorAuthzOneConnection?: WrkResult;
  /** One connection to the floor Envoy's authz route on its Node.js responder's listener. */
  readonly floorNodeAuthzOneConnection?: WrkResult;
  /** Server CPU (user + system, us) per Check in the loaded authz run and in the one-connection run. */
  readonly cpuPerCheckUs: number;
  /** The kernel (system) part of `cpuPerCheckUs`: socket reads and writes, epoll. */
  readonly cpuPerCheckSystemUs: number;
  readonly cpuPerCheckOneConnectionUs: number;
  readonly cpuPerCheckFixedDecisionOneConnectionUs: number;
  /** Server CPU per second during the loaded bare run (ext_authz is idle there: the floor). */
  readonly idleCpuUsPerS: number;
}

/** What this suite reports. */
export interface AuthzEndToEndResult {
  /** Who served the Checks: `h2c` (production) or `grpc-js`. */
  readonly transport: string;
  readonly sessions: number;
  readonly extraRoutes: number;
  readonly connections: number;
  readonly secondsPerRun: number;
  readonly repetitions: readonly Repetition[];
  readonly bareRps: Summary;
  readonly authzRps: Summary;
  /** authz / bare throughput, per repetition. */
  readonly throughputRatio: Summary;
  readonly bareP50Us: Summary;
  readonly bareP99Us: Summary;
  readonly authzP50Us: Summary;
  readonly authzP99Us: Summary;
  /** authz - bare at one connection, per repetition. */
  readonly addedP50Us: Summary;
  readonly addedP99Us: Summary;
  /** fixed decision - bare at one connection, per repetition: the hop without the decision. */
  readonly addedP50FixedDecisionUs: Summary;
  readonly addedP99FixedDecisionUs: Summary;
  /** authz - fixed decision at one connection, per repetition: the decision's share (paired runs). */
  readonly decisionShareP50Us: Summary;
  /** floor authz - floor bare at one connection, per repetition: a do-nothing Check server's hop. */
  readonly addedP50FloorUs?: Summary;
  readonly addedP99FloorUs?: Summary;
  /** authz added - floor added at one connection, per repetition: what Portcullis adds over the floor. */
  readonly aboveFloorP50Us?: Summary;
  /** Node.js floor authz - floor bare at one connection, per repetition: a do-nothing Node.js Check server's hop. */
  readonly addedP50NodeFloorUs?: Summary;
  /** authz added - Node.js floor added, per repetition: what Portcullis's own code adds over answering from Node.js. */
  readonly aboveNodeFloorP50Us?: Summary;
  readonly cpuPerCheckUs: Summary;
  readonly cpuPerCheckSystemUs: Summary;
  readonly cpuPerCheckOneConnectionUs: Summary;
  readonly cpuPerCheckFixedDecisionOneConnectionUs: Summary;
  readonly startupMs: number;
  /** The same measurement with the `--compare` transports, run after this one in the same run. */
  readonly comparisons?: readonly AuthzEndToEndResult[];
}

/** ext_authz's gRPC timeout as Portcullis compiles it for the benchmark's config (no `grpc_client_timeout`). */
const AUTHORIZE_TIMEOUT_MS = 10_000;
/** The session cookie's name in the benchmark's config (the default). */
const SESSION_COOKIE_NAME = '_portcullis';

async function extAuthzOk(adminUrl: string): Promise<number> {
  const filter = encodeURIComponent('^http\\.ingress\\.ext_authz\\.ok$');
  const body = (await adminRequest(adminUrl, `/stats?filter=${filter}`, { timeoutMs: 5000 })).body;
  return Number(/ext_authz\.ok: (\d+)/.exec(body)?.[1] ?? 0);
}

/** What every transport's measurement shares. */
interface Settings {
  readonly reps: number;
  readonly seconds: number;
  readonly connections: number;
  readonly sessions: number;
  readonly extraRoutes: number;
  readonly profileDir: string | undefined;
  readonly upstreamPort: number;
  /** The identity headers the upstream last received on the authz route (for the floor's answer). */
  readonly lastIdentityHeaders: () => readonly (readonly [string, string])[];
}

async function main(): Promise<void> {
  const args = parseArgs();
  requireWrk();
  let identityHeaders: (readonly [string, string])[] = [];
  const upstream = createServer((req, res) => {
    // Captured once, in the warm-up, so measured requests pay nothing for it (Node builds
    // `req.headers` on first access). The routes rewrite Host to the upstream's address, so the
    // assertion is what marks an authz request.
    if (identityHeaders.length === 0 && req.headers[ASSERTION_HEADER] !== undefined)
      identityHeaders = Object.entries(req.headers)
        .filter(([name]) => name.startsWith('x-portcullis-'))
        .map(([name, value]) => [name, String(value)] as const);
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 });
    res.end('ok');
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const settings: Settings = {
    reps: numberArg(args, 'reps', 5),
    seconds: numberArg(args, 'seconds', 4),
    connections: numberArg(args, 'connections', 16),
    sessions: numberArg(args, 'sessions', 100_000),
    extraRoutes: numberArg(args, 'routes', 0),
    profileDir: args.get('profile'),
    upstreamPort: (upstream.address() as AddressInfo).port,
    lastIdentityHeaders: () => identityHeaders,
  };
  try {
    const primary = await measure(args.get('transport') ?? 'h2c', settings, args.get('floor') !== '0');
    const comparisons: AuthzEndToEndResult[] = [];
    for (const transport of (args.get('compare') ?? '').split(',').filter((name) => name !== '')) {
      comparisons.push(await measure(transport, settings, false));
    }
    writeResult(args, comparisons.length === 0 ? primary : { ...primary, comparisons });
  } finally {
    upstream.close();
  }
}

/**
 * Starts Portcullis with `transport` serving Checks, measures bare vs authorized (and, with
 * `withFloor`, the floor Envoy's routes in the same repetitions), stops everything it started.
 */
async function measure(
  transport: string,
  settings: Settings,
  withFloor: boolean,
): Promise<AuthzEndToEndResult> {
  const { reps, seconds, connections, sessions, extraRoutes, profileDir, upstreamPort } = settings;
  const started = performance.now();
  const server = fork(
    `${REPO_ROOT}bench/lib/authz-server.ts`,
    [
      `--upstream=127.0.0.1:${upstreamPort}`,
      `--sessions=${sessions}`,
      `--routes=${extraRoutes}`,
      `--transport=${transport}`,
    ],
    {
      execArgv: [
        '--import',
        'tsx',
        ...(profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]),
      ],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  const waiters: { resolve: (message: AuthzServerMessage) => void; reject: (err: Error) => void }[] = [];
  server.on('message', (message: AuthzServerMessage) => waiters.shift()?.resolve(message));
  server.once('exit', (code) => {
    for (const waiter of waiters.splice(0))
      waiter.reject(new Error(`authz server exited with ${String(code)}`));
  });
  const next = (): Promise<AuthzServerMessage> =>
    new Promise((resolve, reject) => waiters.push({ resolve, reject }));
  let floor: AuthzFloor | undefined;
  try {
    const ready = await next();
    if (ready.type !== 'ready') throw new Error('authz server: expected ready');
    const startupMs = round(performance.now() - started);
    progress(
      'authz',
      `${transport}: Portcullis + Envoy ready in ${Math.round(startupMs)} ms; ${sessions} sessions`,
    );
    const cpuSplit = async (): Promise<{ total: number; system: number }> => {
      const reply = next();
      server.send({ type: 'cpu' });
      const message = await reply;
      if (message.type !== 'cpu') throw new Error('authz server: expected cpu');
      return { total: message.userUs + message.systemUs, system: message.systemUs };
    };
    const cpu = async (): Promise<number> => (await cpuSplit()).total;
    const url = `http://127.0.0.1:${ready.proxyPort}/`;
    const bareHeaders = { Host: BARE_HOST };
    const authzHeaders = { Host: AUTHZ_HOST, Cookie: ready.cookie };
    const fixedDecisionHeaders = { Host: FIXED_DECISION_HOST, Cookie: ready.cookie };
    const load = (
      headers: Record<string, string>,
      conns: number,
      durationS: number,
      target = url,
    ): Promise<WrkResult> =>
      runWrk({ url: target, headers, connections: conns, threads: 1, durationS }).then((result) => {
        if (result.errors > 0)
          throw new Error(`${headers.Host ?? ''}: ${result.errors} errors or non-2xx responses`);
        return result;
      });
    /** An authz run with the server's CPU and Envoy's Check count around it. */
    const measured = async (
      conns: number,
      headers: Record<string, string> = authzHeaders,
    ): Promise<{ result: WrkResult; cpuPerCheckUs: number; systemPerCheckUs: number }> => {
      const [cpuBefore, checksBefore] = [await cpuSplit(), await extAuthzOk(ready.adminUrl)];
      const result = await load(headers, conns, seconds);
      const [cpuAfter, checksAfter] = [await cpuSplit(), await extAuthzOk(ready.adminUrl)];
      const checks = Math.max(1, checksAfter - checksBefore);
      return {
        result,
        cpuPerCheckUs: round((cpuAfter.total - cpuBefore.total) / checks),
        systemPerCheckUs: round((cpuAfter.system - cpuBefore.system) / checks),
      };
    };
    // Warm-up: JIT, connection pools, the assertion cache entry.
    await load(bareHeaders, connections, 1);
    await load(authzHeaders, connections, 2);
    await load(fixedDecisionHeaders, 1, 1);
    if (withFloor) {
      if (settings.lastIdentityHeaders().length === 0)
        throw new Error('floor: the upstream saw no assertion');
      // The floor is context, not a target: without it (no C compiler, say) the run goes on.
      try {
        floor = await startAuthzFloor({
          upstreamPort,
          allowHeaders: settings.lastIdentityHeaders(),
          timeoutMs: AUTHORIZE_TIMEOUT_MS,
          cookieName: SESSION_COOKIE_NAME,
        });
        await load({ Host: FLOOR_BARE_HOST }, 1, 1, floor.url);
        await load({ Host: FLOOR_AUTHZ_HOST, Cookie: ready.cookie }, 1, 1, floor.url);
        await load({ Host: FLOOR_AUTHZ_HOST, Cookie: ready.cookie }, 1, 1, floor.nodeUrl);
        progress(
          'authz',
          `floor ready (${settings.lastIdentityHeaders().length} identity headers in its allow)`,
        );
      } catch (err) {
        await floor?.stop();
        floor = undefined;
        progress('authz', `FLOOR SKIPPED, measuring without it: ${(err as Error).message}`);
      }
    }
    const repetitions: Repetition[] = [];
    for (let rep = 0; rep < reps; rep++) {
      const idleBefore = await cpu();
      const bare = await load(bareHeaders, connections, seconds);
      const idleCpuUsPerS = round((await cpu()) - idleBefore) / seconds;
      const authz = await measured(connections);
      const bareOne = await load(bareHeaders, 1, seconds);
      const authzOne = await measured(1);
      const fixedOne = await measured(1, fixedDecisionHeaders);
      const floorBareOne = floor && (await load({ Host: FLOOR_BARE_HOST }, 1, seconds, floor.url));
      const floorAuthzOne =
        floor && (await load({ Host: FLOOR_AUTHZ_HOST, Cookie: ready.cookie }, 1, seconds, floor.url));
      const floorNodeAuthzOne =
        floor && (await load({ Host: FLOOR_AUTHZ_HOST, Cookie: ready.cookie }, 1, seconds, floor.nodeUrl));
      repetitions.push({
        bare,
        authz: authz.result,
        bareOneConnection: bareOne,
        authzOneConnection: authzOne.result,
        fixedDecisionOneConnection: fixedOne.result,
        ...(floorBareOne && floorAuthzOne && floorNodeAuthzOne
          ? {
              floorBareOneConnection: floorBareOne,
              floorAuthzOneConnection: floorAuthzOne,
              floorNodeAuthzOneConnection: floorNodeAuthzOne,
            }
          : {}),
        cpuPerCheckUs: authz.cpuPerCheckUs,
        cpuPerCheckSystemUs: authz.systemPerCheckUs,
        cpuPerCheckOneConnectionUs: authzOne.cpuPerCheckUs,
        cpuPerCheckFixedDecisionOneConnectionUs: fixedOne.cpuPerCheckUs,
        idleCpuUsPerS,
      });
      progress(
        'authz',
        `${transport} rep ${rep + 1}/${reps}: ${Math.round(bare.requestsPerSecond)} vs ${Math.round(authz.result.requestsPerSecond)} req/s; p50 ${bareOne.p50Us} vs ${authzOne.result.p50Us} (fixed decision ${fixedOne.result.p50Us}${floorBareOne && floorAuthzOne ? `; floor ${floorBareOne.p50Us} vs ${floorAuthzOne.p50Us}, Node.js ${floorNodeAuthzOne?.p50Us ?? '?'}` : ''}) us, p99 ${bareOne.p99Us} vs ${authzOne.result.p99Us} us; ${authz.cpuPerCheckUs} us CPU/Check`,
      );
    }
    const of = (pick: (r: Repetition) => number): Summary => summarize(repetitions.map(pick));
    /** What a floor authz run added over the floor Envoy's bare run, in the same repetition. */
    const overFloorBare = (
      r: Repetition,
      authzRun: WrkResult | undefined,
      pick: (w: WrkResult) => number,
    ): number =>
      authzRun && r.floorBareOneConnection ? pick(authzRun) - pick(r.floorBareOneConnection) : NaN;
    const floorAdded = (r: Repetition, pick: (w: WrkResult) => number): number =>
      overFloorBare(r, r.floorAuthzOneConnection, pick);
    const nodeFloorAdded = (r: Repetition): number =>
      overFloorBare(r, r.floorNodeAuthzOneConnection, (w) => w.p50Us);
    const addedP50 = (r: Repetition): number => r.authzOneConnection.p50Us - r.bareOneConnection.p50Us;
    const floorSummaries =
      floor === undefined
        ? {}
        : {
            addedP50FloorUs: of((r) => floorAdded(r, (w) => w.p50Us)),
            addedP99FloorUs: of((r) => floorAdded(r, (w) => w.p99Us)),
            aboveFloorP50Us: of((r) => addedP50(r) - floorAdded(r, (w) => w.p50Us)),
            addedP50NodeFloorUs: of(nodeFloorAdded),
            aboveNodeFloorP50Us: of((r) => addedP50(r) - nodeFloorAdded(r)),
          };
    return {
      transport,
      sessions,
      extraRoutes,
      connections,
      secondsPerRun: seconds,
      repetitions,
      bareRps: of((r) => r.bare.requestsPerSecond),
      authzRps: of((r) => r.authz.requestsPerSecond),
      throughputRatio: of((r) => r.authz.requestsPerSecond / r.bare.requestsPerSecond),
      bareP50Us: of((r) => r.bareOneConnection.p50Us),
      bareP99Us: of((r) => r.bareOneConnection.p99Us),
      authzP50Us: of((r) => r.authzOneConnection.p50Us),
      authzP99Us: of((r) => r.authzOneConnection.p99Us),
      addedP50Us: of(addedP50),
      addedP99Us: of((r) => r.authzOneConnection.p99Us - r.bareOneConnection.p99Us),
      addedP50FixedDecisionUs: of((r) => r.fixedDecisionOneConnection.p50Us - r.bareOneConnection.p50Us),
      addedP99FixedDecisionUs: of((r) => r.fixedDecisionOneConnection.p99Us - r.bareOneConnection.p99Us),
      decisionShareP50Us: of((r) => r.authzOneConnection.p50Us - r.fixedDecisionOneConnection.p50Us),
      ...floorSummaries,
      cpuPerCheckUs: of((r) => r.cpuPerCheckUs),
      cpuPerCheckSystemUs: of((r) => r.cpuPerCheckSystemUs),
      cpuPerCheckOneConnectionUs: of((r) => r.cpuPerCheckOneConnectionUs),
      cpuPerCheckFixedDecisionOneConnectionUs: of((r) => r.cpuPerCheckFixedDecisionOneConnectionUs),
      startupMs,
    };
  } finally {
    await floor?.stop();
    server.send({ type: 'stop' });
    await new Promise((resolve) => {
      const timer = setTimeout(() => {
        server.kill('SIGKILL');
        resolve(undefined);
      }, 5000);
      server.once('exit', () => {
        clearTimeout(timer);
        resolve(undefined);
      });
    });
  }
}

await main();

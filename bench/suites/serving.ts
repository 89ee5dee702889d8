/**
 * Change-to-serving benchmark with a real Envoy, for one route count, in its own process: Portcullis
 * all-in-one runs in this process (ADS over delta gRPC, the reloader watching the config file) and
 * supervises Envoy 1.40. Each iteration makes a one-route change (one route replaced by a route for
 * a new host, whose two weighted upstreams are local echo servers) by writing the whole file to a
 * temp name and renaming it over the config, as editors do. The clock starts just before the
 * rename and stops at the first 200 for the new host through Envoy's listener, polled every
 * `--poll-ms` (fresh connection each time). Also recorded per iteration: when the new snapshot
 * was published (so rename -> publish is watcher + debounce + parse + translate + compile +
 * snapshot, and publish -> 200 is the ADS push plus Envoy applying it and warming the new cluster).
 *
 *   node --import tsx bench/suites/serving.ts --routes=10000 --iterations=7 --debounce=0
 */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAllInOne, type AllInOne } from '../../src/cmd/all-in-one.js';
import { adminRequest } from '../../src/envoy/admin.js';
import type { Logger } from '../../src/shared/logger.js';
import { freePort } from '../../test/support/ports.js';
import { startEchoUpstream, type EchoUpstream } from '../../test/support/upstreams.js';
import { numberArg, parseArgs, progress } from '../lib/child.js';
import { configYaml, generatedRoutes, routeYaml, type RouteShape } from '../lib/config-gen.js';
import { writeResult } from '../lib/output.js';
import { pollUntil200, statusOf, until } from '../lib/poll.js';
import { summarize, type Summary } from '../lib/stats.js';

/**
 * Upstreams on loopback only: generated routes point at 127.x.y.z port 9, where nothing listens,
 * so Envoy's health checks are refused at once and never leave the machine. The interval is 30 s
 * so 20,000 checked hosts do not keep Envoy (and this two-core machine) busy between iterations,
 * and first checks are spread over one second per 1,000 routes (see `healthCheckInitialJitter`): at
 * most about 2,000 checks a second at start-up. The routes whose change
 * is timed (`CHANGED_SHAPE`) have no initial jitter, so their cluster warms as fast as Envoy can.
 */
const CHANGED_SHAPE: RouteShape = { network: 127, upstreamPort: 9, healthCheckInterval: '30s', public: true };

interface Iteration {
  readonly totalMs: number;
  /** Rename -> `store.publish` called: watcher, debounce, parse, translate, compile, snapshot. */
  readonly renameToPublishMs: number;
  /** Inside `store.publish`: the ADS server preparing the snapshot and writing to the stream. */
  readonly publishMs: number;
  /** `store.publish` returned -> first 200: transfer, Envoy applying CDS/EDS/RDS, warming the cluster. */
  readonly publishToServeMs: number;
  /**
   * `store.publish` returned -> Envoy's newest RDS `config_reload_time_ms` (wall clock, 1 ms
   * resolution): how much of publish -> 200 is Envoy receiving and applying the RouteConfiguration.
   */
  readonly publishToRdsAppliedMs: number | undefined;
  /** The reload's own stage timings, from its `config reloaded` log line (parse .. publish). */
  readonly reloadStagesMs: Readonly<Record<string, number>> | undefined;
  readonly polls: number;
  readonly statusesBefore200: Readonly<Record<string, number>>;
}

/** What this suite reports for one route count. */
export interface ServingResult {
  readonly routes: number;
  readonly debounceMs: number;
  readonly pollIntervalMs: number;
  readonly adsApiType: 'DELTA_GRPC';
  readonly warmupIterations: number;
  readonly iterations: readonly Iteration[];
  readonly total: Summary;
  readonly renameToPublish: Summary;
  readonly publish: Summary;
  readonly publishToServe: Summary;
  readonly publishToRdsApplied: Summary | undefined;
  /** Per reload stage (parse, translate, compile, check, snapshot, publish), the median over iterations. */
  readonly reloadStages: Readonly<Record<string, number>>;
  readonly startupMs: number;
}

/** Set once measuring is over, so Envoy's shutdown chatter does not look like a problem. */
let stopping = false;

/** The stage timings of the last `config reloaded` log line (kept to print per iteration). */
let lastReloadMs: Readonly<Record<string, number>> | undefined;
/** Errors and warnings to stderr; the rest is dropped so logging does not skew the timings. */
const logger: Logger = {
  debug: () => {},
  info: (obj, msg) => {
    // Only a reload that changed something: a later no-change reload must not overwrite it.
    const ms = (obj as { ms?: unknown } | undefined)?.ms;
    if (msg === 'config reloaded' && ms !== undefined) lastReloadMs = ms as Record<string, number>;
  },
  warn: (obj, msg) => {
    if (!stopping)
      process.stderr.write(`[portcullis warn] ${msg ?? ''} ${JSON.stringify(obj).slice(0, 300)}\n`);
  },
  error: (obj, msg) => {
    if (!stopping)
      process.stderr.write(`[portcullis error] ${msg ?? ''} ${JSON.stringify(obj).slice(0, 300)}\n`);
  },
  child: () => logger,
};

async function clusterCounts(adminUrl: string): Promise<{ active: number; warming: number }> {
  const filter = encodeURIComponent('^cluster_manager\\.(active|warming)_clusters$');
  const body = (await adminRequest(adminUrl, `/stats?filter=${filter}`, { timeoutMs: 5000 })).body;
  const read = (name: string): number => Number(new RegExp(`${name}: (\\d+)`).exec(body)?.[1] ?? NaN);
  return { active: read('active_clusters'), warming: read('warming_clusters') };
}

/**
 * Envoy's wall-clock time (ms) of the last RouteConfiguration it applied: `ingress`, or under
 * per-host delivery the newest of the `ingress/<host>` ones. The stats sit under the HCM's
 * prefix (`http.ingress.rds.ingress/<host>.config_reload_time_ms`); the scoped-RDS stat beside
 * them (`http.ingress.scoped_rds.ingress...`) does not match, as `rds` must follow a dot.
 */
async function rdsReloadTime(adminUrl: string): Promise<number | undefined> {
  const filter = encodeURIComponent('\\.rds\\.ingress.*\\.config_reload_time_ms$');
  const body = (await adminRequest(adminUrl, `/stats?filter=${filter}`, { timeoutMs: 5000 })).body;
  const values = [...body.matchAll(/config_reload_time_ms: (\d+)/g)].map((match) => Number(match[1]));
  const newest = Math.max(0, ...values);
  return newest > 0 ? newest : undefined;
}

/** Waits until Envoy warmed every cluster it was given and ACKed clusters and routes past `acksBefore`. */
async function settle(
  running: AllInOne,
  adminUrl: string,
  routes: number,
  acksBefore: { clusters: number; routes: number; scopes: number },
): Promise<void> {
  await until(
    async () => {
      const acks = running.ads.stats().acks;
      // Routes arrive as RDS (one RouteConfiguration) or, per host, inline in SRDS scopes.
      const routing = acks.routes + acks.scopes;
      if (acks.clusters <= acksBefore.clusters || routing <= acksBefore.routes + acksBefore.scopes)
        return false;
      const counts = await clusterCounts(adminUrl);
      return counts.warming === 0 && counts.active >= routes;
    },
    'Envoy to ACK and warm every cluster',
    { intervalMs: 50, timeoutMs: 120_000 },
  );
}

/** Each reload stage's median over the iterations that logged it. */
function stageMedians(iterations: readonly Iteration[]): Record<string, number> {
  const byStage = new Map<string, number[]>();
  for (const { reloadStagesMs } of iterations)
    for (const [stage, ms] of Object.entries(reloadStagesMs ?? {}))
      byStage.set(stage, [...(byStage.get(stage) ?? []), ms]);
  return Object.fromEntries([...byStage].map(([stage, values]) => [stage, summarize(values).median]));
}

function optionalSummary(values: readonly (number | undefined)[]): Summary | undefined {
  const present = values.filter((value): value is number => value !== undefined);
  return present.length === values.length && present.length > 0 ? summarize(present) : undefined;
}

async function main(): Promise<void> {
  const args = parseArgs();
  const routeCount = numberArg(args, 'routes');
  const iterations = numberArg(args, 'iterations', 7);
  const warmup = numberArg(args, 'warmup', 1);
  const debounceMs = numberArg(args, 'debounce', 0);
  const pollIntervalMs = numberArg(args, 'poll-ms', 2);
  const tag = `serving ${routeCount}`;
  if (routeCount < 2) throw new Error('--routes must be at least 2');

  const dir = mkdtempSync(join(tmpdir(), 'portcullis-bench-serving-'));
  const echoes: EchoUpstream[] = [];
  let running: AllInOne | undefined;
  try {
    echoes.push(await startEchoUpstream({ id: 'a' }), await startEchoUpstream({ id: 'b' }));
    const targets: [string, string] = [`127.0.0.1:${echoes[0]?.port}`, `127.0.0.1:${echoes[1]?.port}`];
    const [proxyPort, grpcPort, adminPort] = [await freePort(), await freePort(), await freePort()];
    const base = {
      address: `127.0.0.1:${proxyPort}`,
      grpcAddress: `127.0.0.1:${grpcPort}`,
      adminAddress: `127.0.0.1:${adminPort}`,
    };
    const adminUrl = `http://127.0.0.1:${adminPort}`;
    const configPath = join(dir, 'config.yaml');
    const jitter = `${Math.max(1, Math.ceil(routeCount / 1000))}s`;
    const routes = generatedRoutes(routeCount, { ...CHANGED_SHAPE, healthCheckInitialJitter: jitter });
    routes[0] = routeYaml('canary.bench.test', targets, CHANGED_SHAPE); // proves Envoy serves the initial config
    writeFileSync(configPath, configYaml(base, routes));

    const started = performance.now();
    running = await startAllInOne({
      configPath,
      env: {},
      logger,
      adsApiType: 'DELTA_GRPC',
      reloadDebounceMs: debounceMs,
    });
    const live = running;
    // Timestamps around every publish (start, end): the ADS server fans out synchronously inside it.
    const publishTimes: number[] = [];
    let publishEndWallClock = 0;
    const publish = live.store.publish.bind(live.store);
    live.store.publish = (snapshot) => {
      publishTimes.push(performance.now());
      const changed = publish(snapshot);
      publishTimes.push(performance.now());
      publishEndWallClock = Date.now();
      return changed;
    };
    await pollUntil200(proxyPort, 'canary.bench.test', { intervalMs: 50, timeoutMs: 120_000 });
    await settle(live, adminUrl, routeCount, { clusters: 0, routes: 0, scopes: 0 });
    const startupMs = performance.now() - started;
    progress(tag, `Envoy serves ${routeCount} routes after ${Math.round(startupMs)} ms`);

    const measured: Iteration[] = [];
    for (let i = 0; i < warmup + iterations; i++) {
      const host = `changed-${i}.bench.test`;
      const index = 1 + ((i * 7919) % (routeCount - 1));
      routes[index] = routeYaml(host, targets, CHANGED_SHAPE);
      const temp = `${configPath}.tmp`;
      writeFileSync(temp, configYaml(base, routes));
      const statusBefore = await statusOf(proxyPort, host);
      if (statusBefore !== 404)
        throw new Error(`${host} answered ${statusBefore} before the change; expected 404`);
      const acksBefore = live.ads.stats().acks;
      publishTimes.length = 0;
      lastReloadMs = undefined;
      const t0 = performance.now();
      renameSync(temp, configPath);
      const served = await pollUntil200(proxyPort, host, { intervalMs: pollIntervalMs, timeoutMs: 60_000 });
      const [publishStart, publishEnd] = publishTimes;
      if (publishStart === undefined || publishEnd === undefined)
        throw new Error('served before the store published: impossible');
      const rdsReloadedAt = await rdsReloadTime(adminUrl);
      const iteration: Iteration = {
        totalMs: served.at - t0,
        renameToPublishMs: publishStart - t0,
        publishMs: publishEnd - publishStart,
        publishToServeMs: served.at - publishEnd,
        publishToRdsAppliedMs: rdsReloadedAt === undefined ? undefined : rdsReloadedAt - publishEndWallClock,
        reloadStagesMs: lastReloadMs,
        polls: served.attempts,
        statusesBefore200: served.before,
      };
      if (i >= warmup) measured.push(iteration);
      progress(
        tag,
        `${i < warmup ? 'warm-up' : `iteration ${i - warmup + 1}/${iterations}`}: ${iteration.totalMs.toFixed(1)} ms (publish after ${iteration.renameToPublishMs.toFixed(1)} ms, took ${iteration.publishMs.toFixed(1)} ms; stages ${JSON.stringify(lastReloadMs)})`,
      );
      await settle(live, adminUrl, routeCount, acksBefore);
    }

    const result: ServingResult = {
      routes: routeCount,
      debounceMs,
      pollIntervalMs,
      adsApiType: 'DELTA_GRPC',
      warmupIterations: warmup,
      iterations: measured,
      total: summarize(measured.map((m) => m.totalMs)),
      renameToPublish: summarize(measured.map((m) => m.renameToPublishMs)),
      publish: summarize(measured.map((m) => m.publishMs)),
      publishToServe: summarize(measured.map((m) => m.publishToServeMs)),
      publishToRdsApplied: optionalSummary(measured.map((m) => m.publishToRdsAppliedMs)),
      reloadStages: stageMedians(measured),
      startupMs: Math.round(startupMs),
    };
    writeResult(args, result);
  } finally {
    stopping = true;
    await running?.stop();
    for (const echo of echoes) await echo.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

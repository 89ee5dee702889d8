import { renameSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { SIGN_IN_YAML } from '../../test/support/sign-in-config.js';
import {
  applyChange,
  changeKindAt,
  churnRoutes,
  initialChurnState,
  type ChangeKind,
  type ChurnState,
} from '../../test/support/churn.js';
import { describeLoad, startLoad, type LoadReport } from '../../test/support/churn-load.js';
import { checksSoFar } from '../../test/support/envoy-checks.js';
import { seededRandom } from '../../test/support/seeded-random.js';
import { startEchoUpstream, type EchoUpstream } from '../../test/support/upstreams.js';
import type { Context } from '../lib/context.js';
import { bulkRoutes, configYaml } from '../lib/config-gen.js';
import { startPortcullisChild } from '../lib/portcullis-process.js';
import { whileRunning } from '../lib/processes.js';
import type { Measurement, SuiteResult } from '../lib/report.js';
import { loopbackPorts, waitServing, type Ports } from '../lib/serving.js';
import { summarize, type Summary } from '../lib/stats.js';

/** A fixed `shared_secret`, so the session handle the child issues is one Portcullis accepts. */
const SHARED_SECRET = Buffer.alloc(32, 28).toString('base64');
/** The child's one session (bench-session-0) is this user's. */
const USER = 'user0@example.com';
const MARKER_HOST = 'marker.churn.test';
const MARKER_HEADER = 'x-churn-change';
const CONNECTIONS = 8;
/** The simplify issue's budget for a change to serve at 10,000 routes. */
const BUDGET_MS = 500;
/** Issue 36: 0 failed requests over at least this many changes at 10,000 routes. */
const MIN_CHANGES_10K = 300;

/** One size: how many routes, and how many changes or how long. */
interface Size {
  readonly routes: number;
  readonly changes: number;
  readonly seconds: number;
}

/** What one size measured. */
interface SizeResult {
  readonly routes: number;
  readonly changes: number;
  readonly byKind: Readonly<Record<string, number>>;
  readonly load: LoadReport;
  /** Checks Envoy sent during the load: the protected requests the fast path did not decide. */
  readonly checks: number;
  /** Rename to the change serving through Envoy, per change. */
  readonly servingMs: Summary & { readonly p95: number };
}

/**
 * Every kind of live change of issue 28 (but the certificate: the listener is plain HTTP) under a
 * steady load, at 1,000 routes (1,000 changes) and at 10,000 routes (300 changes; each size has a
 * time limit, and a run cut short by it misses the budget):
 * Portcullis all-in-one in its own process (`portcullis-child.ts`, one session), its real Envoy,
 * load from `CONNECTIONS` keep-alive connections that keep cookies (so protected requests carry
 * the decision cookie their answers set) on two public and two protected routes whose
 * upstreams, weights, health checks, outlier detection, policy, headers and timeouts keep changing,
 * while extra routes come and go and the list is reordered; the rest are bulk routes. Each change
 * is a new file renamed over the config, and also sets a marker header on a marker route: the
 * change serves when a request through Envoy (a fresh connection every 2 ms) reaches the upstream
 * with the new marker. The next change follows at once. Reports requests, failures (non-2xx and
 * socket errors; target 0) and the rename-to-serving time (budget < 500 ms at 10,000 routes).
 */
export async function churnSuite(context: Context): Promise<SuiteResult> {
  const sizes: Size[] = context.quick
    ? [
        { routes: 1000, changes: 100, seconds: 300 },
        { routes: 10_000, changes: 20, seconds: 300 },
      ]
    : [
        { routes: 1000, changes: 1000, seconds: 600 },
        { routes: 10_000, changes: MIN_CHANGES_10K, seconds: 1800 },
      ];
  const upstreams = await Promise.all(['a', 'b', 'c'].map((id) => startEchoUpstream({ id })));
  const results: SizeResult[] = [];
  try {
    for (const size of sizes) results.push(await churnAt(context, size, upstreams));
  } finally {
    await Promise.all(upstreams.map((upstream) => upstream.stop()));
  }
  return {
    name: 'churn',
    how: "Portcullis all-in-one in its own process with its real Envoy; 8 keep-alive connections that keep cookies on 2 public and 2 protected routes (a session cookie, plus the decision cookie the answers set; Checks counted from Envoy's stats) while every kind of issue-28 change but the certificate is renamed over the config one after another (1,000 changes at 1,000 routes, 300 at 10,000; each bounded in time); each change also sets a marker header, and it serves when a request through Envoy (fresh connection, every 2 ms) carries the new marker to the upstream.",
    measurements: results.flatMap(measurementsOf),
    data: { sizes: results.map((result) => ({ ...result, load: loadSummary(result.load) })) },
  };
}

/** One size: start, churn, stop. */
async function churnAt(
  context: Context,
  size: Size,
  upstreams: readonly EchoUpstream[],
): Promise<SizeResult> {
  const urls = upstreams.map((upstream) => upstream.url);
  const ports = await loopbackPorts();
  const configPath = join(context.workDir, `churn-${size.routes}.yaml`);
  let state: ChurnState = initialChurnState({ publicRoutes: 2, protectedRoutes: 2 });
  const bulk = bulkRoutes(size.routes - state.loaded.length - state.extras.length - 1, {
    healthCheck: false,
  });
  const write = (path: string, change: number): void =>
    writeFileSync(path, churnConfig(ports, state, urls, bulk, change));
  write(configPath, 0);
  const child = await startPortcullisChild(context, {
    configPath,
    name: `churn-${size.routes}`,
    sessions: 1,
    secret: SHARED_SECRET,
    timeoutMs: 600_000,
  });
  const byKind: Record<string, number> = {};
  const times: number[] = [];
  let load: LoadReport | undefined;
  let checks = NaN;
  try {
    const publicHosts = state.loaded.filter((route) => !route.protected).map((route) => route.host);
    await waitServing(child.started, ports, {
      clusters: size.routes,
      hosts: [...publicHosts, MARKER_HOST],
      intervalMs: 100,
      timeoutMs: 120_000,
    });
    const checksBefore = await checksSoFar(ports.adminUrl);
    // Keep-alive clients that keep cookies, like browsers: the protected routes' answers set the
    // fast path's decision cookie, and later requests carry it.
    const running = startLoad({
      port: ports.proxyPort,
      connections: CONNECTIONS,
      keepCookies: true,
      targets: state.loaded.map((route) => ({
        host: route.host,
        ...(route.protected ? { headers: { cookie: child.cookie } } : {}),
      })),
    });
    const random = seededRandom(size.routes);
    const deadline = performance.now() + size.seconds * 1000;
    try {
      for (let change = 1; change <= size.changes && performance.now() < deadline; change++) {
        const step = applyChange(
          state,
          changeKindAt(change - 1, { certificate: false }),
          random,
          urls.length,
        );
        state = step.state;
        byKind[step.kind] = (byKind[step.kind] ?? 0) + 1;
        running.mark(step.kind satisfies ChangeKind);
        write(`${configPath}.tmp`, change);
        const started = performance.now();
        renameSync(`${configPath}.tmp`, configPath);
        const served = await whileRunning(child.started, markerServed(ports.proxyPort, change));
        times.push(served - started);
        if (change % 100 === 0)
          context.progress(`churn at ${size.routes} routes: ${change} changes, ${running.requests} requests`);
      }
    } finally {
      load = await running.stop();
      checks = (await checksSoFar(ports.adminUrl).catch(() => NaN)) - checksBefore;
    }
  } finally {
    await child.stop();
  }
  const summary = summarize(times);
  const sorted = [...times].sort((a, b) => a - b);
  const p95 = Math.round((sorted[Math.floor(sorted.length * 0.95)] ?? NaN) * 100) / 100;
  context.progress(
    `churn at ${size.routes} routes: ${times.length} changes, serving median ${summary.median} ms; ${describeLoad(load)}; ${checks} Checks`,
  );
  return { routes: size.routes, changes: times.length, byKind, load, checks, servingMs: { ...summary, p95 } };
}

/** The whole config: sign-in settings, the churn routes and the marker route first, then the bulk. */
function churnConfig(
  ports: Ports,
  state: ChurnState,
  urls: readonly string[],
  bulk: readonly string[],
  change: number,
): string {
  const marker = {
    from: `https://${MARKER_HOST}`,
    to: urls[0],
    allow_public_unauthenticated_access: true,
    set_request_headers: { [MARKER_HEADER]: String(change) },
  };
  const chunks = [marker, ...churnRoutes(state, urls, USER)].map((route) =>
    stringify([route])
      .split('\n')
      .map((line) => (line === '' ? line : `  ${line}`))
      .join('\n'),
  );
  return configYaml(ports, [...chunks, ...bulk], `shared_secret: ${SHARED_SECRET}\n${SIGN_IN_YAML}`);
}

/** Resolves with `performance.now()` once the marker route's upstream sees change `change`. */
async function markerServed(port: number, change: number): Promise<number> {
  const deadline = performance.now() + 30_000;
  for (;;) {
    const seen = await markerSeen(port).catch(() => undefined);
    const at = performance.now();
    if (seen === String(change)) return at;
    if (at > deadline) throw new Error(`change ${change} did not serve in 30 s (marker ${seen})`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** The marker header the echo upstream saw on one request through Envoy (a fresh connection). */
function markerSeen(port: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/', headers: { host: MARKER_HOST }, agent: false, timeout: 2000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          if (res.statusCode !== 200) return resolve(undefined);
          const echo = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
            headers: Record<string, unknown>;
          };
          const value = echo.headers[MARKER_HEADER];
          resolve(typeof value === 'string' ? value : undefined);
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** Failures kept in the result file, each with its host, kind and change (the rest are counted). */
const FAILURES_KEPT = 50;

/** The load report with at most `FAILURES_KEPT` of its failures (their counts by kind stay). */
function loadSummary(load: LoadReport): LoadReport & { readonly failed: number } {
  return { ...load, failures: load.failures.slice(0, FAILURES_KEPT), failed: load.failures.length };
}

function measurementsOf(result: SizeResult): Measurement[] {
  const routes = result.routes.toLocaleString('en-US');
  const failed = result.load.failures.length;
  const large = result.routes >= 10_000;
  return [
    {
      what: `requests failed under churn (non-2xx or socket error), ${routes} routes`,
      budget: large ? `0 over >= ${MIN_CHANGES_10K} changes` : '0',
      value: failed,
      unit: 'requests',
      pass: failed === 0 && (!large || result.changes >= MIN_CHANGES_10K),
      detail: `${result.changes} changes; ${describeLoad(result.load)}; Envoy sent ${result.checks} Checks (one per protected-route request the fast path did not decide) for about ${Math.round(result.load.requests / 2).toLocaleString('en-US')} protected-route requests`,
    },
    {
      what: `rename to the change serving under churn, ${routes} routes`,
      budget: result.routes >= 10_000 ? `< ${BUDGET_MS} ms` : '(reported)',
      value: result.servingMs.median,
      unit: 'ms',
      pass: result.routes < 10_000 || result.servingMs.median < BUDGET_MS,
      detail: `median of ${result.changes} changes; p95 ${result.servingMs.p95} ms, max ${result.servingMs.max} ms`,
    },
  ];
}

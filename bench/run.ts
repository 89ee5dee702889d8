/**
 * `npm run bench`: the control-plane performance targets, measured.
 *
 *   compile            Config -> IR -> xDS -> encoded snapshot at 1,000 and 10,000 routes (parse separate)
 *   change-to-serving  config file rename -> first 200 for a changed route through a real Envoy
 *   memory             control-plane heap and RSS at 0, 1,000 and 10,000 routes with a connected client
 *   message-size       largest resource and largest delta / SotW response at 10,000 routes
 *   authz              bare route vs the same route through ext_authz (real Envoy, wrk), and the
 *                      decision alone at 10,000 routes and 100,000 sessions
 *
 * Every measurement runs in a fresh child process, bounded in time; everything listens on loopback.
 * Results: `bench/results/<name>.json` (every run, medians, targets, pass/fail) and
 * `bench/results/summary.md`; a short table is printed at the end. Options:
 *   --only=compile,change-to-serving,memory,message-size,authz   run a subset
 *   --quick                                                fewer runs (smoke test, not for quoting)
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CompileResult } from './suites/compile.js';
import type { ControlPlaneResult } from './suites/control-plane.js';
import type { ServingResult } from './suites/serving.js';
import type { AuthzEndToEndResult } from './suites/authz.js';
import type { AuthzDecisionResult } from './lib/authz-decision.js';
import { requireWrk } from './lib/authz-wrk.js';
import { parseArgs, runChild } from './lib/child.js';
import {
  fmt,
  markdownTable,
  RESULTS_DIR,
  runEnvironment,
  textTable,
  writeResultFile,
  type RunEnvironment,
  type TargetCheck,
} from './lib/report.js';
import { mib, round, summarize, type Summary } from './lib/stats.js';

const MIB = 1024 * 1024;
const SUITES = ['compile', 'change-to-serving', 'memory', 'message-size', 'authz'] as const;
type SuiteName = (typeof SUITES)[number];

interface Settings {
  readonly quick: boolean;
  readonly environment: RunEnvironment;
}

/** What a suite hands back for the summary. */
interface SuiteReport {
  readonly name: SuiteName;
  readonly targets: readonly TargetCheck[];
  /** Extra rows for the summary table: [what, value]. */
  readonly facts: readonly (readonly [string, string])[];
}

/**
 * Runs the compile child for 1k and 10k alternately, four rounds each, and pools the timed passes:
 * on a shared machine the load changes over a minute, and alternating keeps both sizes (and so
 * their ratio) measured under the same conditions. Only the first round times parsing.
 */
async function compileSuite(settings: Settings): Promise<SuiteReport> {
  const rounds = settings.quick ? 1 : 4;
  const runsPerRound = settings.quick ? 5 : 3;
  const sizes = [1000, 10_000];
  const byRoutes = new Map<number, CompileResult[]>();
  for (let round = 0; round < rounds; round++) {
    for (const routes of sizes) {
      const result = await runChild<CompileResult>({
        script: 'suites/compile.ts',
        args: [
          `--routes=${routes}`,
          `--runs=${runsPerRound}`,
          // Similar JIT warmth for both sizes: a 1,000-route pass runs each function a tenth as often.
          `--warmup=${routes < 5000 ? 15 : 4}`,
          `--parse-runs=${round === 0 ? (settings.quick ? 2 : 5) : 0}`,
        ],
        // A full GC before each timed pass clears the garbage of the fresh parse it compiles.
        nodeFlags: ['--expose-gc'],
        timeoutMs: 120_000,
      });
      byRoutes.set(routes, [...(byRoutes.get(routes) ?? []), result]);
    }
  }
  const results = sizes.map((routes) => pool(byRoutes.get(routes) ?? []));
  const [small, large] = results as [CompileResult, CompileResult];
  const ratio = round(large.total.median / small.total.median);
  const targets: TargetCheck[] = [
    {
      name: 'compile 10,000 routes (median)',
      target: '< 500 ms',
      measured: large.total.median,
      unit: 'ms',
      pass: large.total.median < 500,
    },
    {
      name: 'compile 1,000 routes (median)',
      target: '< 50 ms',
      measured: small.total.median,
      unit: 'ms',
      pass: small.total.median < 50,
    },
    { name: 'compile time(10k) / time(1k)', target: '<= 12', measured: ratio, unit: 'x', pass: ratio <= 12 },
  ];
  writeResultFile('compile', {
    description:
      'compile = translate + compile + buildSnapshot + consistency check (Config -> encoded, versioned, checked snapshot; since session 10 compile hands over lazy resources and buildSnapshot builds each message just before encoding it); parse (file -> Config) reported separately. Each size in its own process (15 warm-up passes at 1k, 4 at 10k), sizes alternated over 4 rounds of 3 timed passes, medians of the pooled passes. referenceSnapshot = the pre-optimization snapshot build (protobufjs fromObject+encode, createHash) of the same messages built beforehand, same process.',
    environment: settings.environment,
    targets,
    ratio10kTo1k: ratio,
    results,
  });
  const facts: [string, string][] = [];
  for (const result of results) {
    const n = result.routes.toLocaleString('en-US');
    if (result.parse !== undefined)
      facts.push([`parse ${n} routes (median)`, `${fmt(result.parse.median)} ms`]);
    facts.push([
      `compile ${n}: translate / compile / snapshot / check`,
      `${fmt(result.phases.translate.median)} / ${fmt(result.phases.compile.median)} / ${fmt(result.phases.snapshot.median)} / ${fmt(result.phases.consistency.median)} ms`,
    ]);
    facts.push([
      `snapshot ${n}: before (protobufjs, messages built beforehand) vs now (building them too)`,
      `${fmt(result.referenceSnapshot.median)} vs ${fmt(result.phases.snapshot.median)} ms (${fmt(round(result.referenceSnapshot.median / result.phases.snapshot.median))}x)`,
    ]);
    if (!result.encodersAgree)
      facts.push([`ENCODER MISMATCH at ${n}`, 'fast path bytes differ from protobufjs']);
  }
  return { name: 'compile', targets, facts };
}

/** Merges several children's results for one size: every timed pass pooled, medians recomputed. */
function pool(parts: readonly CompileResult[]): CompileResult {
  const first = parts[0];
  if (first === undefined) throw new Error('no compile results');
  const merged = (pick: (r: CompileResult) => Summary | undefined): Summary =>
    summarize(parts.flatMap((r) => pick(r)?.runs ?? []));
  return {
    ...first,
    parse: merged((r) => r.parse),
    total: merged((r) => r.total),
    phases: {
      translate: merged((r) => r.phases.translate),
      compile: merged((r) => r.phases.compile),
      consistency: merged((r) => r.phases.consistency),
      snapshot: merged((r) => r.phases.snapshot),
    },
    referenceSnapshot: merged((r) => r.referenceSnapshot),
    encodersAgree: parts.every((r) => r.encodersAgree),
  };
}

async function servingSuite(settings: Settings): Promise<SuiteReport> {
  const iterations = settings.quick ? 3 : 7;
  // The production default debounce (50 ms): it only delays in-place writes; the benchmark's
  // rename (an editor's atomic save) is acted on at once either way.
  const runs: { routes: number; debounce: number }[] = [
    { routes: 1000, debounce: 50 },
    { routes: 10_000, debounce: 50 },
  ];
  const results: ServingResult[] = [];
  for (const { routes, debounce } of settings.quick ? runs.slice(0, 2) : runs) {
    results.push(
      await runChild<ServingResult>({
        script: 'suites/serving.ts',
        args: [`--routes=${routes}`, `--iterations=${iterations}`, `--debounce=${debounce}`, '--poll-ms=2'],
        timeoutMs: 240_000,
      }),
    );
  }
  const at = (routes: number, debounce: number): ServingResult | undefined =>
    results.find((result) => result.routes === routes && result.debounceMs === debounce);
  const large = at(10_000, 50) as ServingResult;
  const small = at(1000, 50) as ServingResult;
  const targets: TargetCheck[] = [
    {
      name: 'change-to-serving 10,000 routes (median)',
      target: '< 150 ms',
      measured: large.total.median,
      unit: 'ms',
      pass: large.total.median < 150,
      note: `debounce ${large.debounceMs} ms; rename->publish ${fmt(large.renameToPublish.median)} ms (the reload's own stages: ${stagesText(large.reloadStages)}), publish ${fmt(large.publish.median)} ms, publish->200 ${fmt(large.publishToServe.median)} ms (Envoy had applied the new RouteConfiguration ${large.publishToRdsApplied === undefined ? '?' : fmt(large.publishToRdsApplied.median)} ms after publish)`,
    },
    {
      name: 'change-to-serving 1,000 routes (median)',
      target: 'reported (target is for 10k)',
      measured: small.total.median,
      unit: 'ms',
      pass: null,
      note: `debounce ${small.debounceMs} ms; rename->publish ${fmt(small.renameToPublish.median)} ms, publish->200 ${fmt(small.publishToServe.median)} ms`,
    },
  ];
  writeResultFile('change-to-serving', {
    description:
      'Real Envoy (delta ADS), Portcullis all-in-one in the benchmark process. One-route change: a route replaced by one for a new host (two weighted local echo upstreams, HTTP health check, outlier detection). Clock: just before renaming the new file over the config -> first 200 for the new host through Envoy, polled every pollIntervalMs on a fresh connection. The reloader debounce is debounceMs (the production default, 50 ms; it delays in-place writes only, a rename is acted on at once). Exact hosts, so Envoy gets per-host scoped routes. One warm-up iteration is not counted.',
    environment: settings.environment,
    targets,
    results,
  });
  const facts: [string, string][] = results.map((result) => [
    `change-to-serving ${result.routes.toLocaleString('en-US')} (debounce ${result.debounceMs} ms): rename->publish / publish / publish->200`,
    `${fmt(result.renameToPublish.median)} / ${fmt(result.publish.median)} / ${fmt(result.publishToServe.median)} ms (total ${fmt(result.total.median)}; Envoy applied RDS ${result.publishToRdsApplied === undefined ? '?' : fmt(result.publishToRdsApplied.median)} ms after publish)`,
  ]);
  return { name: 'change-to-serving', targets, facts };
}

/** A reload's stage medians as `parse 4.1 / translate 2.0 / ... ms`, or `not logged`. */
function stagesText(stages: Readonly<Record<string, number>>): string {
  const parts = Object.entries(stages).map(([stage, ms]) => `${stage} ${fmt(ms)}`);
  return parts.length === 0 ? 'not logged' : `${parts.join(' / ')} ms`;
}

async function controlPlaneRuns(): Promise<ControlPlaneResult[]> {
  const results: ControlPlaneResult[] = [];
  for (const routes of [0, 1000, 10_000]) {
    results.push(
      await runChild<ControlPlaneResult>({
        script: 'suites/control-plane.ts',
        args: [`--routes=${routes}`],
        nodeFlags: ['--expose-gc'],
        timeoutMs: 240_000,
      }),
    );
  }
  return results;
}

function memoryReport(settings: Settings, results: readonly ControlPlaneResult[]): SuiteReport {
  const [zero, one, ten] = results as [ControlPlaneResult, ControlPlaneResult, ControlPlaneResult];
  const held = (r: ControlPlaneResult): number => r.memory.heapUsed + r.memory.external;
  const perThousand = (value: (r: ControlPlaneResult) => number, to: ControlPlaneResult): number =>
    mib((value(to) - value(zero)) / (to.routes / 1000));
  const heldSlope10k = perThousand(held, ten);
  const rssSlope10k = perThousand((r) => r.memory.rss, ten);
  const targets: TargetCheck[] = [
    {
      name: 'memory growth per 1,000 routes (heap + external, 0 -> 10k)',
      target: '< 15 MiB',
      measured: heldSlope10k,
      unit: 'MiB',
      pass: heldSlope10k < 15,
      note: `0 -> 1k: ${perThousand(held, one)} MiB per 1k`,
    },
    {
      name: 'memory growth per 1,000 routes (RSS, 0 -> 10k)',
      target: '< 15 MiB',
      measured: rssSlope10k,
      unit: 'MiB',
      pass: rssSlope10k < 15,
      note: `0 -> 1k: ${perThousand((r) => r.memory.rss, one)} MiB per 1k; RSS keeps freed parse garbage V8 has not returned to the OS`,
    },
  ];
  writeResultFile('memory', {
    description:
      'Each route count in a fresh process (--expose-gc): Reloader (keeps the last good build) + SnapshotStore + AdsServer on loopback gRPC, one delta fake Envoy in a separate process subscribed and converged, then a full GC; process.memoryUsage() in bytes. Growth per 1,000 routes = (value(N) - value(0)) / (N / 1000).',
    environment: settings.environment,
    targets,
    readings: results.map((r) => ({ routes: r.routes, ...r.memory })),
  });
  const facts: [string, string][] = results.map((r) => [
    `memory at ${r.routes.toLocaleString('en-US')} routes: heap / external / RSS`,
    `${mib(r.memory.heapUsed)} / ${mib(r.memory.external)} / ${mib(r.memory.rss)} MiB`,
  ]);
  return { name: 'memory', targets, facts };
}

function messageReport(settings: Settings, results: readonly ControlPlaneResult[]): SuiteReport {
  const ten = results.find((r) => r.routes === 10_000) as ControlPlaneResult;
  const largestSent = Math.max(ten.delta.initial.largestBytes, ten.delta.oneRouteChange.largestBytes);
  const largestSotw = Math.max(ten.sotw.initial.largestBytes, ten.sotw.oneRouteChange.largestBytes);
  const limit = 4 * MIB;
  const targets: TargetCheck[] = [
    {
      name: 'largest encoded resource at 10k',
      target: '< 4 MiB',
      measured: ten.largestResource.bytes,
      unit: 'B',
      pass: ten.largestResource.bytes < limit,
      note: `${ten.largestResource.type} ${ten.largestResource.name}`,
    },
    {
      name: 'largest DeltaDiscoveryResponse sent at 10k',
      target: '< 4 MiB',
      measured: largestSent,
      unit: 'B',
      pass: largestSent < limit,
      note: `delta responses are split above ${ten.maxMessageBytes} B`,
    },
    {
      name: 'largest SotW DiscoveryResponse sent at 10k',
      target: '< 4 MiB',
      measured: largestSotw,
      unit: 'B',
      pass: largestSotw < limit,
      note: `SotW CDS is all clusters in one message (${ten.sotwCdsBodyBytes} B body); it cannot be split`,
    },
  ];
  writeResultFile('message-size', {
    description:
      'Wire sizes of responses actually received by a fake Envoy (delta, then SotW) at each route count: the initial sync and a one-route change. Sizes in bytes.',
    environment: settings.environment,
    targets,
    results: results.map((r) => ({
      routes: r.routes,
      largestResource: r.largestResource,
      routeConfigurationBytes: r.routeConfigurationBytes,
      sotwCdsBodyBytes: r.sotwCdsBodyBytes,
      delta: r.delta,
      sotw: r.sotw,
    })),
  });
  const facts: [string, string][] = results
    .filter((r) => r.routes > 0)
    .map((r) => [
      `xDS at ${r.routes.toLocaleString('en-US')}: all routes (RouteConfiguration or scopes) / largest delta / SotW CDS`,
      `${fmt(mib(r.routeConfigurationBytes))} / ${fmt(mib(Math.max(r.delta.initial.largestBytes, r.delta.oneRouteChange.largestBytes)))} / ${fmt(mib(r.sotwCdsBodyBytes))} MiB`,
    ]);
  return { name: 'message-size', targets, facts };
}

/**
 * Authorization speed: the end-to-end child (Portcullis in its own process, real Envoy, wrk) and
 * the in-process decision child, each bounded in time.
 */
async function authzSuite(settings: Settings): Promise<SuiteReport> {
  requireWrk(); // a clear reason in the summary, not a child's ENOENT
  const endToEnd = await runChild<AuthzEndToEndResult>({
    script: 'suites/authz.ts',
    args: [
      `--reps=${settings.quick ? 2 : 5}`,
      `--seconds=${settings.quick ? 2 : 4}`,
      '--connections=16',
      '--transport=h2c',
      '--compare=grpc-js',
    ],
    timeoutMs: 600_000,
  });
  const decision = await runChild<AuthzDecisionResult>({
    script: 'lib/authz-decision.ts',
    args: ['--routes=10000', '--sessions=100000', `--iterations=${settings.quick ? 30_000 : 200_000}`],
    timeoutMs: 240_000,
  });
  const e = endToEnd;
  const targets: TargetCheck[] = [
    {
      name: 'authorized throughput / bare route (median of per-rep ratios)',
      target: '>= 0.45x',
      measured: e.throughputRatio.median,
      unit: 'x',
      pass: e.throughputRatio.median >= 0.45,
      note: `${e.connections} connections, wrk 1 thread, ${e.secondsPerRun} s per run; bare ${fmt(e.bareRps.median)} req/s, authz ${fmt(e.authzRps.median)} req/s`,
    },
    {
      name: 'added latency p50, one connection',
      target: '< 200 us',
      measured: e.addedP50Us.median,
      unit: 'us',
      pass: e.addedP50Us.median < 200,
      note: `bare p50 ${fmt(e.bareP50Us.median)} us, authz p50 ${fmt(e.authzP50Us.median)} us${
        e.addedP50FloorUs === undefined || e.aboveFloorP50Us === undefined
          ? ''
          : `; a do-nothing native Check server adds ${fmt(e.addedP50FloorUs.median)} us on this host in the same repetitions (the floor), Portcullis ${fmt(e.aboveFloorP50Us.median)} us above it`
      }${
        e.addedP50NodeFloorUs === undefined || e.aboveNodeFloorP50Us === undefined
          ? ''
          : `; the same do-nothing server in Node.js adds ${fmt(e.addedP50NodeFloorUs.median)} us, Portcullis ${fmt(e.aboveNodeFloorP50Us.median)} us above it`
      }`,
    },
    {
      name: 'added latency p99, one connection',
      target: '< 1000 us',
      measured: e.addedP99Us.median,
      unit: 'us',
      pass: e.addedP99Us.median < 1000,
      note: `bare p99 ${fmt(e.bareP99Us.median)} us, authz p99 ${fmt(e.authzP99Us.median)} us`,
    },
    {
      name: 'decision p50 (10k routes, 100k sessions)',
      target: '< 10 us',
      measured: decision.decision.p50Us,
      unit: 'us',
      pass: decision.decision.p50Us < 10 && decision.allAllowedWithAssertion,
      note: `AuthorizeRequest -> Decision; with CheckRequest decode and CheckResponse encode: p50 ${fmt(decision.check.p50Us)} us, p99 ${fmt(decision.check.p99Us)} us`,
    },
    {
      name: 'decision p99 (10k routes, 100k sessions)',
      target: '< 50 us',
      measured: decision.decision.p99Us,
      unit: 'us',
      pass: decision.decision.p99Us < 50 && decision.allAllowedWithAssertion,
    },
    {
      name: 'ext_authz server CPU per request (loaded)',
      target: '< 45 us',
      measured: e.cpuPerCheckUs.median,
      unit: 'us',
      pass: e.cpuPerCheckUs.median < 45,
      note: `user + system of the Portcullis process / Checks Envoy counted (system ${fmt(e.cpuPerCheckSystemUs.median)} us); at one connection ${fmt(e.cpuPerCheckOneConnectionUs.median)} us`,
    },
  ];
  writeResultFile('authz', {
    description:
      'Same Envoy (concurrency 2), same upstream (fixed 2-byte 200), one run: a public route (no ext_authz) vs the same route through Portcullis ext_authz (served by the h2c Check server on the shared gRPC port; `comparisons` repeats everything with grpc-js serving Check) with a valid session cookie and the signed assertion (pass_identity_headers). Portcullis in its own process with 100,000 sessions; load from wrk (HTTP/1.1 keep-alive). Per repetition: loaded bare, loaded authz, one-connection bare, one-connection authz, one-connection fixed decision (the authz route copied to another host whose Checks get the first decision made for it again: the hop without the work of deciding), then the floor: one-connection bare and authz routes of a second, static Envoy (same binary, concurrency 2, the ext_authz settings Portcullis compiles) whose ext_authz calls a native do-nothing responder (bench/lib/floor-responder.c) answering with the allow Portcullis gave, and the authz route on a second listener of the same Envoy whose ext_authz calls the same do-nothing responder written in Node.js (bench/lib/floor-responder-node.ts, its own process). Added latency = authz - bare per repetition (fixed decision - bare for the hop alone). CPU = process.cpuUsage() delta of the Portcullis process / http.ingress.ext_authz.ok delta. decision = in-process, 10,000 routes + 100,000 sessions, AuthorizeRequest -> Decision per request (assertion from the cache), and CheckRequest bytes -> CheckResponse bytes.',
    environment: settings.environment,
    targets,
    endToEnd,
    decision,
  });
  const facts: [string, string][] = [
    [
      'authz: bare vs authorized req/s (median)',
      `${fmt(e.bareRps.median)} vs ${fmt(e.authzRps.median)} (${fmt(e.throughputRatio.median)}x)`,
    ],
    [
      'authz: one connection p50 / p99, bare vs authorized',
      `${fmt(e.bareP50Us.median)} / ${fmt(e.bareP99Us.median)} vs ${fmt(e.authzP50Us.median)} / ${fmt(e.authzP99Us.median)} us`,
    ],
    [
      'authz: added p50 / p99 with the decision fixed (the ext_authz hop alone)',
      `${fmt(e.addedP50FixedDecisionUs.median)} / ${fmt(e.addedP99FixedDecisionUs.median)} us (real decision: ${fmt(e.addedP50Us.median)} / ${fmt(e.addedP99Us.median)} us); the decision's share, authz - fixed per repetition: ${fmt(e.decisionShareP50Us.median)} us at p50; server CPU per Check at one connection ${fmt(e.cpuPerCheckFixedDecisionOneConnectionUs.median)} vs ${fmt(e.cpuPerCheckOneConnectionUs.median)} us`,
    ],
    ...(e.addedP50FloorUs === undefined || e.addedP99FloorUs === undefined || e.aboveFloorP50Us === undefined
      ? []
      : [
          [
            'authz: the floor, added p50 / p99 through a do-nothing native Check server (static Envoy, same binary and ext_authz settings)',
            `${fmt(e.addedP50FloorUs.median)} / ${fmt(e.addedP99FloorUs.median)} us (per repetition: ${e.addedP50FloorUs.runs.map(fmt).join(', ')} us at p50); Portcullis above the floor at p50, per repetition: ${e.aboveFloorP50Us.runs.map(fmt).join(', ')} us (median ${fmt(e.aboveFloorP50Us.median)})`,
          ] as [string, string],
        ]),
    ...(e.addedP50NodeFloorUs === undefined || e.aboveNodeFloorP50Us === undefined
      ? []
      : [
          [
            'authz: the Node.js floor, added p50 through the same do-nothing Check server in Node.js (same floor Envoy, its second listener)',
            `${fmt(e.addedP50NodeFloorUs.median)} us (per repetition: ${e.addedP50NodeFloorUs.runs.map(fmt).join(', ')} us); Portcullis above it at p50, per repetition: ${e.aboveNodeFloorP50Us.runs.map(fmt).join(', ')} us (median ${fmt(e.aboveNodeFloorP50Us.median)})`,
          ] as [string, string],
        ]),
    [
      'authz: Check in-process (decode + decide + encode) p50 / p99',
      `${fmt(decision.check.p50Us)} / ${fmt(decision.check.p99Us)} us`,
    ],
    ...[e, ...(e.comparisons ?? [])].map((t): [string, string] => [
      `authz via ${t.transport}: ratio / added p50 / added p99 / CPU per Check`,
      `${fmt(t.throughputRatio.median)}x / ${fmt(t.addedP50Us.median)} us / ${fmt(t.addedP99Us.median)} us / ${fmt(t.cpuPerCheckUs.median)} us`,
    ]),
  ];
  return { name: 'authz', targets, facts };
}

function summarizeAll(settings: Settings, reports: readonly SuiteReport[], elapsedMs: number): void {
  const targets = reports.flatMap((report) => report.targets);
  const rows = targets.map((t) => [
    t.name,
    t.target,
    `${fmt(t.measured)} ${t.unit}`,
    t.pass === null ? 'info' : t.pass ? 'PASS' : 'FAIL',
  ]);
  const facts = reports.flatMap((report) => report.facts);
  const markdown = [
    '# Benchmark summary',
    '',
    `${settings.environment.date}, Node ${settings.environment.node}, ${settings.environment.cpus} x ${settings.environment.cpuModel}, load ${settings.environment.loadAverageAtStart.join(' ')} at start, commit ${settings.environment.gitCommit}${settings.environment.gitDirty ? ' (dirty)' : ''}${settings.quick ? ', QUICK run (not for quoting)' : ''}. Medians; this machine is shared and noisy. Total ${Math.round(elapsedMs / 1000)} s.`,
    '',
    markdownTable(['target', 'limit', 'measured', ''], rows),
    '',
    ...targets.filter((t) => t.note !== undefined).map((t) => `- ${t.name}: ${t.note}`),
    '',
    markdownTable(['detail', 'value'], facts),
    '',
    'Raw numbers: `compile.json`, `change-to-serving.json`, `memory.json`, `message-size.json`, `authz.json`.',
    '',
  ].join('\n');
  writeFileSync(join(RESULTS_DIR, 'summary.md'), markdown);
  process.stdout.write(
    `\n${textTable(['target', 'limit', 'measured', ''], rows)}\n\n${textTable(['detail', 'value'], facts)}\n\nwritten: bench/results/summary.md and ${reports.map((r) => `${r.name}.json`).join(', ')}\n`,
  );
}

/** Runs one suite; a suite that fails is reported as failed and the others still run. */
async function guarded(name: SuiteName, run: () => Promise<SuiteReport[]>): Promise<SuiteReport[]> {
  try {
    return await run();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`[bench] ${name} failed: ${message}\n`);
    writeResultFile(name, { error: message });
    return [
      {
        name,
        targets: [
          {
            name: `${name}: suite failed`,
            target: 'runs',
            measured: 0,
            unit: '',
            pass: false,
            note: message,
          },
        ],
        facts: [],
      },
    ];
  }
}

async function main(): Promise<void> {
  const args = parseArgs();
  const only = args.get('only')?.split(',') ?? [...SUITES];
  const unknown = only.filter((name) => !(SUITES as readonly string[]).includes(name));
  if (unknown.length > 0)
    throw new Error(`unknown suite ${unknown.join(', ')}; choose from ${SUITES.join(', ')}`);
  const settings: Settings = { quick: args.has('quick'), environment: runEnvironment() };
  const started = performance.now();
  const reports: SuiteReport[] = [];
  if (only.includes('compile'))
    reports.push(...(await guarded('compile', async () => [await compileSuite(settings)])));
  if (only.includes('memory') || only.includes('message-size')) {
    reports.push(
      ...(await guarded('memory', async () => {
        const controlPlane = await controlPlaneRuns();
        return [
          ...(only.includes('memory') ? [memoryReport(settings, controlPlane)] : []),
          ...(only.includes('message-size') ? [messageReport(settings, controlPlane)] : []),
        ];
      })),
    );
  }
  if (only.includes('change-to-serving')) {
    reports.push(...(await guarded('change-to-serving', async () => [await servingSuite(settings)])));
  }
  if (only.includes('authz'))
    reports.push(...(await guarded('authz', async () => [await authzSuite(settings)])));
  summarizeAll(settings, reports, performance.now() - started);
}

await main();

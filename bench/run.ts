/**
 * `npm run bench`: what users of Portcullis feel, measured against the budgets of issues 22 and 36.
 *
 *   validate      `portcullis validate` of 1,000, 10,000 and 50,000 routes, as a whole process, vs a js-yaml parse
 *   cold-start    process start to every route serving through Envoy at 10,000 and 50,000 routes, vs Envoy alone
 *   route-change  one-route change live in Envoy at 10,000 routes vs at 100 routes
 *   memory        control-plane memory growth per 1,000 routes, to 10,000 and to 50,000
 *   rebuild-latency  p99 of protected requests (a Check each) while 10,000-route rebuilds run vs idle (needs wrk)
 *   authz         authorized vs public route on the same Envoy: throughput ratio, added p50
 *   sign-in       signed-in throughput vs oauth2-proxy; 200 concurrent sign-ins (needs Go, wrk)
 *   churn         every kind of live change under load at 1,000 and 10,000 routes (300 changes): failed requests, rename to serving
 *   sessions      sessions in Redis vs in memory: throughput ratio; sign-out across two instances (needs wrk, redis-server)
 *   tcp           a TCP route through `portcullis tcp` vs a direct connection: 100 MiB throughput ratio, set-up time
 *   kubernetes    1,000 Ingresses through `portcullis kubernetes` vs the same routes in a config file: apply to
 *                 serving, an annotation change to serving (needs .tools/kubernetes: `npm run setup:kubernetes`)
 *
 * Options:
 *   --only=<names>    a comma-separated subset of the suites above
 *   --quick           fewer and shorter runs (a smoke test, not numbers to quote)
 *   --root=<dir>      the Portcullis checkout to measure (default: this one)
 *   --results=<dir>   where results go (default: bench/results): each suite's <name>.json replaces
 *                     its previous one, and summary.md shows the latest result of every suite
 *
 * Every measured process runs in its own process group with a time limit and listens on
 * 127.0.0.1 only; a suite that fails is reported as failed and the others still run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Context } from './lib/context.js';
import { ProcessGroups } from './lib/processes.js';
import { BENCH_REPO, product } from './lib/product.js';
import {
  failedSuite,
  loadAverage,
  readSuiteFiles,
  runEnvironment,
  writeSuiteFile,
  writeSummary,
  type SuiteResult,
} from './lib/report.js';
import { authzSuite } from './suites/authz.js';
import { churnSuite } from './suites/churn.js';
import { kubernetesSuite } from './suites/kubernetes.js';
import { coldStartSuite } from './suites/cold-start.js';
import { memorySuite } from './suites/memory.js';
import { rebuildLatencySuite } from './suites/rebuild-latency.js';
import { routeChangeSuite } from './suites/route-change.js';
import { sessionsSuite } from './suites/sessions.js';
import { signInSuite } from './suites/sign-in.js';
import { tcpSuite } from './suites/tcp.js';
import { validateSuite } from './suites/validate.js';

const SUITES: Readonly<Record<string, (context: Context) => Promise<SuiteResult>>> = {
  validate: validateSuite,
  'cold-start': coldStartSuite,
  'route-change': routeChangeSuite,
  memory: memorySuite,
  'rebuild-latency': rebuildLatencySuite,
  authz: authzSuite,
  'sign-in': signInSuite,
  churn: churnSuite,
  sessions: sessionsSuite,
  tcp: tcpSuite,
  kubernetes: kubernetesSuite,
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      only: { type: 'string' },
      quick: { type: 'boolean', default: false },
      root: { type: 'string', default: BENCH_REPO },
      results: { type: 'string', default: join(BENCH_REPO, 'bench', 'results') },
    },
  });
  const names = values.only?.split(',') ?? Object.keys(SUITES);
  const unknown = names.filter((name) => SUITES[name] === undefined);
  if (unknown.length > 0)
    throw new Error(`unknown suite ${unknown.join(', ')}; choose from ${Object.keys(SUITES).join(', ')}`);
  const target = product(resolve(values.root));
  const resultsDir = resolve(values.results);
  const groups = new ProcessGroups();
  const workDir = mkdtempSync(join(tmpdir(), 'portcullis-bench-'));
  const interrupted = (): void => {
    groups.killAll();
    rmSync(workDir, { recursive: true, force: true });
    process.exit(130);
  };
  process.on('SIGINT', interrupted);
  process.on('SIGTERM', interrupted);
  const context: Context = {
    target,
    quick: values.quick,
    groups,
    workDir,
    progress: (message) => process.stderr.write(`[bench] ${message}\n`),
  };
  context.progress(`measuring ${target.root} at ${target.commit}: ${names.join(', ')}`);
  if (target.staleBuild !== undefined) context.progress(`WARNING: ${target.staleBuild}`);
  const started = performance.now();
  for (const name of names) {
    const suite = SUITES[name] as (context: Context) => Promise<SuiteResult>;
    const environment = runEnvironment(target.root, target.commit, values.quick);
    let result: SuiteResult;
    try {
      result = await suite(context);
    } catch (err) {
      context.progress(`${name} failed: ${err instanceof Error ? err.message : String(err)}`);
      result = failedSuite(name, err);
    }
    writeSuiteFile(resultsDir, { ...environment, loadAverageAtEnd: loadAverage() }, result);
  }
  groups.killAll();
  rmSync(workDir, { recursive: true, force: true });
  const summary = writeSummary(resultsDir, readSuiteFiles(resultsDir, Object.keys(SUITES)));
  process.stdout.write(
    `\n${summary}\n${Math.round((performance.now() - started) / 1000)} s; written to ${resultsDir}\n`,
  );
}

await main();

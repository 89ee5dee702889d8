import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Context } from '../lib/context.js';
import { bulkRoutes, configYaml } from '../lib/config-gen.js';
import { BENCH_REPO, cli, productEnv } from '../lib/product.js';
import { logTail, type ProcessSpec } from '../lib/processes.js';
import type { Measurement, SuiteResult } from '../lib/report.js';
import { round, summarize, type Summary } from '../lib/stats.js';

/** Issue 36: validate at 10,000 routes within twice a js-yaml parse of the same file. */
const RATIO_BUDGET = 2;
/** Issue 36: 50,000 routes within 10% of five times 10,000. */
const LINEAR_BUDGET = 1.1;
/** Issue 22's absolute budgets, kept. */
const BUDGET_MS: Readonly<Record<number, number>> = { 1000: 1000, 10_000: 2500 };
const SIZES = [1000, 10_000, 50_000] as const;
const PARSE_ONLY = join(BENCH_REPO, 'bench', 'lib', 'parse-only.mjs');

/** What is timed: the product's `validate` or the baseline that only parses. */
type Side = 'validate' | 'parse';

/** Wall clock of one process from spawn to exit; it must exit 0. */
async function timeProcess(context: Context, spec: Omit<ProcessSpec, 'timeoutMs'>): Promise<number> {
  const started = performance.now();
  const run = context.groups.start({ ...spec, timeoutMs: 180_000 });
  const code = await run.exited;
  const elapsed = performance.now() - started;
  if (code !== 0) throw new Error(`${spec.args.join(' ')} exited with ${code}:\n${logTail(spec.logFile)}`);
  return elapsed;
}

/** One timed run of `side` on `file`. */
function timeSide(context: Context, side: Side, file: string, routes: number): Promise<number> {
  const logFile = join(context.workDir, `validate-${side}-${routes}.log`);
  const base = { cwd: context.target.root, env: productEnv(context.target), logFile };
  if (side === 'validate')
    return timeProcess(context, { ...base, ...cli(context.target, ['validate', '-c', file]) });
  return timeProcess(context, {
    ...base,
    command: process.execPath,
    args: [PARSE_ONLY, context.target.root, file],
  });
}

/**
 * `portcullis validate` as a whole process (Node start, loading the command, reading, parsing and
 * checking the file) at 1,000, 10,000 and 50,000 routes (two weighted upstreams, an HTTP health
 * check and outlier detection each), against a Node process that only reads the same file and
 * parses it with js-yaml from the checkout's node_modules (`parse-only.mjs`, the parser the
 * product uses for YAML). Each round runs, per size, validate then the parse (order reversed every
 * other round), after one warm-up round; medians of the per-round times and of the per-round ratio.
 */
export async function validateSuite(context: Context): Promise<SuiteResult> {
  const runs = context.quick ? 2 : 5;
  const listeners = {
    address: '127.0.0.1:8080',
    grpcAddress: '127.0.0.1:5443',
    adminAddress: '127.0.0.1:9901',
  };
  const files = new Map<number, string>();
  for (const routes of SIZES) {
    const path = join(context.workDir, `validate-${routes}.yaml`);
    writeFileSync(path, configYaml(listeners, bulkRoutes(routes, { healthCheck: true })));
    files.set(routes, path);
  }
  const times = new Map<string, number[]>();
  const ratios = new Map<number, number[]>(SIZES.map((routes) => [routes, []]));
  for (let run = -1; run < runs; run++) {
    for (const routes of SIZES) {
      const order: Side[] = run % 2 === 0 ? ['validate', 'parse'] : ['parse', 'validate'];
      const ms: Record<Side, number> = { validate: NaN, parse: NaN };
      for (const side of order) ms[side] = await timeSide(context, side, files.get(routes) as string, routes);
      context.progress(
        `validate ${routes} routes: ${Math.round(ms.validate)} ms, js-yaml parse ${Math.round(ms.parse)} ms${run < 0 ? ' (warm-up)' : ''}`,
      );
      if (run < 0) continue;
      for (const side of order)
        times.set(`${side}-${routes}`, [...(times.get(`${side}-${routes}`) ?? []), ms[side]]);
      ratios.get(routes)?.push(ms.validate / ms.parse);
    }
  }
  const of = (side: Side, routes: number): Summary => summarize(times.get(`${side}-${routes}`) ?? []);
  const ratio = (routes: number): Summary => summarize(ratios.get(routes) ?? []);
  const [v1, v10, v50] = SIZES.map((routes) => of('validate', routes).median) as [number, number, number];
  const linear = round(v50 / (5 * v10));
  // Per-route slope from 10,000 to 50,000 against 1,000 to 10,000: no fixed cost (Node's start) in it.
  const slope = round((v50 - v10) / 40_000 / ((v10 - v1) / 9000));
  const measurements: Measurement[] = [
    ...[1000, 10_000].map((routes) => {
      const summary = of('validate', routes);
      const budget = BUDGET_MS[routes] as number;
      return {
        what: `validate, ${routes.toLocaleString('en-US')} routes`,
        budget: `< ${budget} ms`,
        value: summary.median,
        unit: 'ms',
        pass: summary.median < budget,
        detail: `runs ${summary.runs.map(Math.round).join(', ')} ms`,
      };
    }),
    ...[10_000, 50_000].map((routes) => {
      const summary = ratio(routes);
      const budgeted = routes === 10_000;
      return {
        what: `validate / js-yaml parse of the same file, ${routes.toLocaleString('en-US')} routes`,
        budget: budgeted ? `<= ${RATIO_BUDGET}` : '(reported)',
        value: summary.median,
        unit: 'x',
        pass: budgeted ? summary.median <= RATIO_BUDGET : null,
        detail: `validate median ${Math.round(of('validate', routes).median)} ms, parse only ${Math.round(of('parse', routes).median)} ms; per-round ratios ${summary.runs.join(', ')}`,
      };
    }),
    {
      what: 'validate at 50,000 routes / 5 x at 10,000',
      budget: `<= ${LINEAR_BUDGET}`,
      value: linear,
      unit: 'x',
      pass: linear <= LINEAR_BUDGET,
      detail: `medians ${Math.round(v50)} ms and ${Math.round(v10)} ms (whole process, Node's start included); per-route time from 10,000 to 50,000 / from 1,000 to 10,000: ${slope}`,
    },
  ];
  return {
    name: 'validate',
    how: "`node bin/portcullis.mjs validate -c <file>` and a Node process that only reads and parses the same file with js-yaml (the checkout's), each from spawn to exit, at 1,000, 10,000 and 50,000 routes (health check and outlier detection on every route), interleaved after one warm-up round; medians.",
    measurements,
    data: {
      times: Object.fromEntries([...times.keys()].map((key) => [key, summarize(times.get(key) ?? [])])),
      ratios: Object.fromEntries(SIZES.map((routes) => [routes, ratio(routes)])),
      linear,
      slope,
    },
  };
}

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Context } from '../lib/context.js';
import { bulkRoutes, configYaml } from '../lib/config-gen.js';
import { cli, productEnv } from '../lib/product.js';
import { logTail } from '../lib/processes.js';
import type { SuiteResult } from '../lib/report.js';
import { summarize, type Summary } from '../lib/stats.js';

const BUDGET_MS: Readonly<Record<number, number>> = { 1000: 1000, 10_000: 2500 };

/** Wall clock of one `node bin/portcullis.mjs validate -c <file>`, from spawn to exit; it must exit 0. */
async function timeValidate(context: Context, configPath: string, logName: string): Promise<number> {
  const { command, args } = cli(context.target, ['validate', '-c', configPath]);
  const logFile = join(context.workDir, `${logName}.log`);
  const started = performance.now();
  const run = context.groups.start({
    command,
    args,
    cwd: context.target.root,
    env: productEnv(context.target),
    logFile,
    timeoutMs: 60_000,
  });
  const code = await run.exited;
  const elapsed = performance.now() - started;
  if (code !== 0) throw new Error(`validate exited with ${code}:\n${logTail(logFile)}`);
  return elapsed;
}

/**
 * `portcullis validate` as a whole process (Node start, loading the command, reading, parsing and
 * checking the file) at 1,000 and 10,000 routes: the two sizes alternate, after one warm-up run
 * each, and each size's median is quoted.
 */
export async function validateSuite(context: Context): Promise<SuiteResult> {
  const sizes = [1000, 10_000];
  const runs = context.quick ? 2 : 5;
  const listeners = {
    address: '127.0.0.1:8080',
    grpcAddress: '127.0.0.1:5443',
    adminAddress: '127.0.0.1:9901',
  };
  const files = new Map<number, string>();
  for (const routes of sizes) {
    const path = join(context.workDir, `validate-${routes}.yaml`);
    writeFileSync(path, configYaml(listeners, bulkRoutes(routes, { healthCheck: true })));
    files.set(routes, path);
  }
  const times = new Map<number, number[]>(sizes.map((routes) => [routes, []]));
  for (let run = -1; run < runs; run++) {
    for (const routes of sizes) {
      const ms = await timeValidate(context, files.get(routes) as string, `validate-${routes}`);
      if (run >= 0) times.get(routes)?.push(ms);
      context.progress(`validate ${routes} routes: ${Math.round(ms)} ms${run < 0 ? ' (warm-up)' : ''}`);
    }
  }
  const summaries = new Map<number, Summary>(
    sizes.map((routes) => [routes, summarize(times.get(routes) ?? [])]),
  );
  return {
    name: 'validate',
    how: '`node bin/portcullis.mjs validate -c <file>` from spawn to exit (exit 0), 1,000 and 10,000 routes alternating after one warm-up run each; medians.',
    measurements: sizes.map((routes) => {
      const summary = summaries.get(routes) as Summary;
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
    data: Object.fromEntries([...summaries].map(([routes, summary]) => [routes, summary])),
  };
}

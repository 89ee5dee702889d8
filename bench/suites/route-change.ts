import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Context } from '../lib/context.js';
import { bulkRoutes, configYaml, routeHost, routeYaml } from '../lib/config-gen.js';
import { clustersReady } from '../lib/envoy-admin.js';
import { pollUntil200, startUpstream, statusOf } from '../lib/http.js';
import { startCli } from '../lib/portcullis-process.js';
import { until, whileRunning, type Started } from '../lib/processes.js';
import type { SuiteResult } from '../lib/report.js';
import { loopbackPorts, waitServing, type Ports } from '../lib/serving.js';
import { round, summarize, type Summary } from '../lib/stats.js';

const SIZES = [100, 10_000] as const;
/** Issue 22's absolute budget at 10,000 routes, kept. */
const BUDGET_MS = 500;
/** Issue 36: the change at 10,000 routes within twice the same change at 100 routes. */
const RATIO_BUDGET = 2;

/** One running Portcullis (and its Envoy) at one size. */
interface Side {
  readonly routes: readonly string[] & string[];
  readonly size: number;
  readonly ports: Ports;
  readonly configPath: string;
  readonly cli: Started;
}

/** Starts `node bin/portcullis.mjs -c <config>` at `size` routes and waits until it serves. */
async function startSide(context: Context, size: number, live: readonly [string, string]): Promise<Side> {
  const routes = bulkRoutes(size, { healthCheck: false });
  routes[0] = routeYaml(routeHost(0), live, { healthCheck: true });
  const ports = await loopbackPorts();
  const configPath = join(context.workDir, `route-change-${size}.yaml`);
  writeFileSync(configPath, configYaml(ports, routes));
  const cli = startCli(context, configPath, `route-change-${size}`, 900_000);
  await waitServing(cli, ports, {
    clusters: size,
    hosts: [routeHost(0)],
    intervalMs: 100,
    timeoutMs: 180_000,
  });
  return { routes, size, ports, configPath, cli };
}

/**
 * Change `change` at one side: the config with one route replaced by a route for a new host (two
 * live upstreams, health-checked), written to a temp file and renamed over the config. Resolves
 * with the milliseconds from just before the rename to the new host's first 200 through Envoy
 * (polled every 2 ms, fresh connections), once Envoy has settled (the replaced route gone, no
 * cluster warming).
 */
async function changeOnce(side: Side, change: number, live: readonly [string, string]): Promise<number> {
  const { ports, routes, configPath, cli, size } = side;
  const host = `changed-${size}-${change}.bench.test`;
  const index = 1 + ((change * 7919) % (size - 1));
  routes[index] = routeYaml(host, live, { healthCheck: true });
  const temp = `${configPath}.tmp`;
  writeFileSync(temp, configYaml(ports, routes));
  const before = await statusOf(ports.proxyPort, host);
  if (before !== 404) throw new Error(`${host} answered ${before} before the change, not 404`);
  const started = performance.now();
  renameSync(temp, configPath);
  const served = await whileRunning(
    cli,
    pollUntil200(ports.proxyPort, host, { intervalMs: 2, timeoutMs: 30_000 }),
  );
  // Settled before the next change: the replaced route is gone and no cluster is warming.
  await whileRunning(
    cli,
    until(
      async () =>
        (await statusOf(ports.proxyPort, routeHost(index))) === 404 &&
        (await clustersReady(ports.adminUrl, size)),
      'Envoy to settle after the change',
      { intervalMs: 50, timeoutMs: 30_000 },
    ),
  );
  // The next change replaces another route; this one's host stays in the list.
  return served - started;
}

/**
 * One-route change live in Envoy at 100 and at 10,000 routes, the same method at both sizes: two
 * `node bin/portcullis.mjs -c <config>` (each with its Envoy) run side by side and the changes
 * alternate between them (the order swapped every other round), so drifting load on a shared
 * machine hits both alike. One warm-up change each, then the medians and the median of the
 * per-round ratio (10,000 / 100).
 */
export async function routeChangeSuite(context: Context): Promise<SuiteResult> {
  const changes = context.quick ? 3 : 9;
  const [a, b] = [await startUpstream(), await startUpstream()];
  const live = [`127.0.0.1:${a.port}`, `127.0.0.1:${b.port}`] as const;
  const sides: Side[] = [];
  const times = new Map<number, number[]>(SIZES.map((size) => [size, []]));
  const ratios: number[] = [];
  try {
    for (const size of SIZES) sides.push(await startSide(context, size, live));
    for (let change = 0; change <= changes; change++) {
      const order = change % 2 === 0 ? sides : [...sides].reverse();
      const ms = new Map<number, number>();
      for (const side of order) ms.set(side.size, await changeOnce(side, change, live));
      const [small, large] = SIZES.map((size) => ms.get(size) as number) as [number, number];
      context.progress(
        `route change ${change === 0 ? 'warm-up' : `${change}/${changes}`}: 100 routes ${small.toFixed(1)} ms, 10,000 routes ${large.toFixed(1)} ms`,
      );
      if (change === 0) continue;
      times.get(100)?.push(small);
      times.get(10_000)?.push(large);
      ratios.push(large / small);
    }
  } finally {
    for (const side of sides) await side.cli.stop();
    await a.stop();
    await b.stop();
  }
  const [small, large] = SIZES.map((size) => summarize(times.get(size) ?? [])) as [Summary, Summary];
  const ratio = summarize(ratios);
  return {
    name: 'route-change',
    how: 'Two Portcullis all-in-one (`node bin/portcullis.mjs -c <config>`, real Envoy) side by side, at 100 and 10,000 routes; rename a new config (one route replaced by one for a new host) over the old one -> first 200 for the new host through Envoy, polled every 2 ms; changes alternate between the two; 1 warm-up each, then medians and the median per-round ratio.',
    measurements: [
      {
        what: 'one-route change live in Envoy, 10,000 routes',
        budget: `< ${BUDGET_MS} ms`,
        value: large.median,
        unit: 'ms',
        pass: large.median < BUDGET_MS,
        detail: `changes ${large.runs.map((ms) => ms.toFixed(0)).join(', ')} ms`,
      },
      {
        what: 'one-route change at 10,000 routes / at 100 routes',
        budget: `<= ${RATIO_BUDGET}`,
        value: ratio.median,
        unit: 'x',
        pass: ratio.median <= RATIO_BUDGET,
        detail: `100 routes: median ${round(small.median)} ms (${small.runs.map((ms) => ms.toFixed(0)).join(', ')}); per-round ratios ${ratio.runs.join(', ')}`,
      },
    ],
    data: { changes: { 100: small, 10_000: large }, ratios: ratio },
  };
}

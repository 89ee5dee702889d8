import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Context } from '../lib/context.js';
import { bulkRoutes, configYaml, routeHost, routeYaml } from '../lib/config-gen.js';
import { clustersReady } from '../lib/envoy-admin.js';
import { pollUntil200, startUpstream, statusOf } from '../lib/http.js';
import { startCli } from '../lib/portcullis-process.js';
import { until, whileRunning } from '../lib/processes.js';
import type { SuiteResult } from '../lib/report.js';
import { loopbackPorts, waitServing } from '../lib/serving.js';
import { summarize } from '../lib/stats.js';

const ROUTES = 10_000;
const BUDGET_MS = 500;

/**
 * One-route change live in Envoy at 10,000 routes: `node bin/portcullis.mjs -c <config>` serves;
 * each change writes the config with one route replaced by a route for a new host (two live
 * upstreams, health-checked) to a temp file and renames it over the config, as editors save. The
 * clock runs from just before the rename to the first 200 for the new host through Envoy, polled
 * every 2 ms on a fresh connection. One warm-up change, then the median of the rest.
 */
export async function routeChangeSuite(context: Context): Promise<SuiteResult> {
  const changes = context.quick ? 3 : 7;
  const [a, b] = [await startUpstream(), await startUpstream()];
  const live = [`127.0.0.1:${a.port}`, `127.0.0.1:${b.port}`] as const;
  const routes = bulkRoutes(ROUTES, { healthCheck: false });
  routes[0] = routeYaml(routeHost(0), live, { healthCheck: true });
  const ports = await loopbackPorts();
  const configPath = join(context.workDir, 'route-change.yaml');
  writeFileSync(configPath, configYaml(ports, routes));
  const cli = startCli(context, configPath, 'route-change', 600_000);
  const times: number[] = [];
  try {
    await waitServing(cli, ports, {
      clusters: ROUTES,
      hosts: [routeHost(0)],
      intervalMs: 100,
      timeoutMs: 120_000,
    });
    for (let change = 0; change <= changes; change++) {
      const host = `changed-${change}.bench.test`;
      const index = 1 + ((change * 7919) % (ROUTES - 1));
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
      const ms = served - started;
      if (change > 0) times.push(ms);
      context.progress(
        `route change ${change === 0 ? 'warm-up' : `${change}/${changes}`}: ${ms.toFixed(1)} ms`,
      );
      // Settled before the next change: the replaced route is gone and no cluster is warming.
      await whileRunning(
        cli,
        until(
          async () =>
            (await statusOf(ports.proxyPort, routeHost(index))) === 404 &&
            (await clustersReady(ports.adminUrl, ROUTES)),
          'Envoy to settle after the change',
          { intervalMs: 50, timeoutMs: 30_000 },
        ),
      );
    }
  } finally {
    await cli.stop();
    await a.stop();
    await b.stop();
  }
  const summary = summarize(times);
  return {
    name: 'route-change',
    how: 'Portcullis all-in-one (`node bin/portcullis.mjs -c <config>`, real Envoy) at 10,000 routes; rename a new config (one route replaced by one for a new host) over the old one -> first 200 for the new host through Envoy, polled every 2 ms; 1 warm-up, then the median.',
    measurements: [
      {
        what: 'one-route change live in Envoy, 10,000 routes',
        budget: `< ${BUDGET_MS} ms`,
        value: summary.median,
        unit: 'ms',
        pass: summary.median < BUDGET_MS,
        detail: `changes ${summary.runs.map((ms) => ms.toFixed(0)).join(', ')} ms`,
      },
    ],
    data: { routes: ROUTES, changes: summary },
  };
}

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Context } from '../lib/context.js';
import { bulkRoutes, configYaml } from '../lib/config-gen.js';
import { startPortcullisChild } from '../lib/portcullis-process.js';
import type { SuiteResult } from '../lib/report.js';
import { loopbackPorts, waitServing } from '../lib/serving.js';
import { mib, round } from '../lib/stats.js';

const SIZES = [0, 1000, 10_000, 50_000] as const;
const BUDGET_MIB = 15;
/** Issue 36: growth per 1,000 routes at 50,000 within 10% of that at 10,000. */
const LINEAR_BUDGET = 1.1;

/** Memory of the Portcullis process at one route count, in bytes. */
interface Reading {
  readonly routes: number;
  readonly rss: number;
  readonly heapUsed: number;
  readonly external: number;
  /** Why Envoy was not synced when the reading was taken (the reading is taken anyway). */
  readonly unsynced?: string;
}

/** Reads the memory of a fresh Portcullis process serving `routes` routes through a synced Envoy. */
async function readingAt(context: Context, routes: number): Promise<Reading> {
  const ports = await loopbackPorts();
  const configPath = join(context.workDir, `memory-${routes}.yaml`);
  writeFileSync(configPath, configYaml(ports, bulkRoutes(routes, { healthCheck: false })));
  const portcullis = await startPortcullisChild(context, {
    configPath,
    name: `memory-${routes}`,
    timeoutMs: 180_000 + routes * 12,
  });
  try {
    let unsynced: string | undefined;
    try {
      await waitServing(portcullis.started, ports, {
        clusters: routes,
        hosts: [],
        intervalMs: 100,
        timeoutMs: 60_000 + routes * 6,
      });
    } catch (err) {
      // Still running but Envoy never synced (50,000 routes today): read what the process holds.
      if (portcullis.started.child.exitCode !== null) throw err;
      unsynced = (err instanceof Error ? err.message : String(err)).slice(0, 300);
      context.progress(`memory at ${routes} routes: Envoy did not sync (${unsynced}); reading anyway`);
    }
    // Envoy has everything; give the last ACKs a moment, then GC and read.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const memory = await portcullis.memory();
    context.progress(
      `memory at ${routes} routes: RSS ${mib(memory.rss)} MiB, heap ${mib(memory.heapUsed)} MiB, external ${mib(memory.external)} MiB`,
    );
    return { routes, ...memory, ...(unsynced === undefined ? {} : { unsynced }) };
  } finally {
    await portcullis.stop();
  }
}

/**
 * Control-plane memory per 1,000 routes: for 0, 1,000, 10,000 and 50,000 routes, a fresh Portcullis
 * all-in-one (`startAllInOne` in its own process, run with `--expose-gc`) with Envoy synced (every
 * cluster active, the listener answering); then a full GC and `process.memoryUsage()`. Growth per
 * 1,000 routes = (reading at N - reading at 0) / (N / 1000).
 */
export async function memorySuite(context: Context): Promise<SuiteResult> {
  const readings: Reading[] = [];
  for (const routes of SIZES) readings.push(await readingAt(context, routes));
  const [zero, one, ten, fifty] = readings as [Reading, Reading, Reading, Reading];
  const perThousand = (pick: (r: Reading) => number, to: Reading): number =>
    round(mib(pick(to) - pick(zero)) / (to.routes / 1000));
  const held = (r: Reading): number => r.heapUsed + r.external;
  const rssSlope = perThousand((r) => r.rss, ten);
  const rssSlope50 = perThousand((r) => r.rss, fifty);
  const linear = round(rssSlope50 / rssSlope);
  const synced = fifty.unsynced === undefined ? '' : `NOT SYNCED: ${fifty.unsynced}; `;
  return {
    name: 'memory',
    how: 'startAllInOne in its own process (--expose-gc) at 0, 1,000, 10,000 and 50,000 routes, Envoy synced, full GC, process.memoryUsage(); growth per 1,000 routes from 0 to 10,000 and from 0 to 50,000.',
    measurements: [
      {
        what: 'control-plane memory growth per 1,000 routes (RSS)',
        budget: `< ${BUDGET_MIB} MiB`,
        value: rssSlope,
        unit: 'MiB',
        pass: rssSlope < BUDGET_MIB,
        detail:
          `heap + external ${perThousand(held, ten)} MiB per 1,000 (0 -> 1,000: RSS ${perThousand((r) => r.rss, one)}, heap + external ${perThousand(held, one)}); ` +
          readings
            .map(
              (r) =>
                `${r.routes} routes: RSS ${mib(r.rss)}, heap ${mib(r.heapUsed)}, external ${mib(r.external)} MiB`,
            )
            .join('; '),
      },
      {
        what: 'control-plane memory growth per 1,000 routes (RSS), 50,000 routes',
        budget: `< ${BUDGET_MIB} MiB`,
        value: rssSlope50,
        unit: 'MiB',
        pass: rssSlope50 < BUDGET_MIB && fifty.unsynced === undefined,
        detail: `${synced}(RSS at 50,000 - RSS at 0) / 50; heap + external ${perThousand(held, fifty)} MiB per 1,000; RSS ${mib(fifty.rss)}, heap ${mib(fifty.heapUsed)}, external ${mib(fifty.external)} MiB`,
      },
      {
        what: 'memory growth per 1,000 routes at 50,000 / at 10,000',
        budget: `<= ${LINEAR_BUDGET}`,
        value: linear,
        unit: 'x',
        pass: linear <= LINEAR_BUDGET && fifty.unsynced === undefined,
        detail: `${synced}${rssSlope50} / ${rssSlope} MiB per 1,000 (RSS); heap + external ${perThousand(held, fifty)} / ${perThousand(held, ten)}`,
      },
    ],
    data: { readings },
  };
}

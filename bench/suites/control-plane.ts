/**
 * Control-plane memory and xDS message sizes for one route count, in its own process (run with
 * `--expose-gc`). The real reload path loads the config (Reloader -> SnapshotStore, keeping the last
 * good build as production does), an AdsServer serves it on loopback gRPC, and one fake Envoy in a
 * separate process (`lib/fake-envoy.ts`) subscribes and ACKs everything, so its memory is not
 * counted here. Memory is read after the client converged and a full GC. Then a one-route change is
 * pushed, and the same is repeated with a SotW client; every response's wire size is recorded.
 *
 *   node --expose-gc --import tsx bench/suites/control-plane.ts --routes=10000
 */
import { BENCH_JWKS } from '../lib/config-gen.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import * as grpc from '@grpc/grpc-js';
import { Reloader } from '../../src/runtime/reloader.js';
import { silentLogger } from '../../src/shared/logger.js';
import {
  CLUSTER_TYPE,
  ROUTE_CONFIGURATION_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
  SHORT_NAMES,
  type ResourceType,
} from '../../src/xds/codec/type-urls.js';
import { AdsServer, DEFAULT_MAX_MESSAGE_BYTES } from '../../src/xds/server/ads-server.js';
import { prepare } from '../../src/xds/server/prepared.js';
import { SnapshotStore } from '../../src/xds/snapshot/snapshot-store.js';
import type { Snapshot } from '../../src/xds/snapshot/types.js';
import { numberArg, parseArgs, progress, REPO_ROOT } from '../lib/child.js';
import { COMPILE_SHAPE, configYaml, generatedRoutes, routeYaml } from '../lib/config-gen.js';
import type { FakeEnvoyLine } from '../lib/fake-envoy.js';
import { collectGarbage, writeResult } from '../lib/output.js';
import { until } from '../lib/poll.js';
import { resourceBytes, resourceVersion } from '../../src/xds/snapshot/snapshot-entry.js';

/** Memory of this process, in bytes. */
export interface MemoryReading {
  readonly heapUsed: number;
  readonly external: number;
  readonly arrayBuffers: number;
  readonly rss: number;
}

/** Largest response per type in one phase, plus counts. */
export interface PhaseSizes {
  readonly responses: number;
  readonly largestBytes: number;
  readonly largestType: string;
  readonly byType: Readonly<
    Record<string, { readonly responses: number; readonly largestBytes: number; readonly totalBytes: number }>
  >;
}

/** What this suite reports for one route count. */
export interface ControlPlaneResult {
  readonly routes: number;
  /** After load + one converged delta client + GC. */
  readonly memory: MemoryReading;
  readonly largestResource: { readonly type: string; readonly name: string; readonly bytes: number };
  /** Every route's bytes: the RouteConfiguration, or under per-host delivery all the scopes. */
  readonly routeConfigurationBytes: number;
  /** The SotW CDS response (every cluster in one message) as the server encodes it. */
  readonly sotwCdsBodyBytes: number;
  readonly maxMessageBytes: number;
  readonly delta: { readonly initial: PhaseSizes; readonly oneRouteChange: PhaseSizes };
  readonly sotw: { readonly initial: PhaseSizes; readonly oneRouteChange: PhaseSizes };
}

class FakeEnvoy {
  readonly lines: FakeEnvoyLine[] = [];
  private readonly child: ChildProcess;

  constructor(address: string, mode: 'delta' | 'sotw') {
    this.child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(REPO_ROOT, 'bench/lib/fake-envoy.ts'),
        `--address=${address}`,
        `--mode=${mode}`,
      ],
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const child = this.child;
    if (child.stdout === null) throw new Error('no stdout');
    createInterface({ input: child.stdout }).on('line', (line) =>
      this.lines.push(JSON.parse(line) as FakeEnvoyLine),
    );
  }

  /** Waits until the client holds `snapshot` (counts and the route version) and has been quiet for 300 ms. */
  async converged(snapshot: Snapshot, mode: 'delta' | 'sotw', timeoutMs: number): Promise<void> {
    const ingress = snapshot.resources[ROUTE_CONFIGURATION_TYPE].get('ingress');
    const routesVersion =
      mode === 'delta'
        ? ingress === undefined
          ? undefined
          : resourceVersion(ingress)
        : snapshot.resources[ROUTE_CONFIGURATION_TYPE].has('ingress')
          ? snapshot.typeVersions[ROUTE_CONFIGURATION_TYPE]
          : undefined;
    let lastCount = -1;
    let quietSince = performance.now();
    const expected = (): string =>
      `expected routes ${routesVersion} and ${JSON.stringify(Object.fromEntries(Object.entries(snapshot.resources).map(([type, map]) => [SHORT_NAMES[type as ResourceType], map.size])))}, last ${JSON.stringify(this.lines[this.lines.length - 1])}`;
    await until(
      () => {
        if (this.lines.length !== lastCount) {
          lastCount = this.lines.length;
          quietSince = performance.now();
          return false;
        }
        const last = this.lines[this.lines.length - 1];
        if (last === undefined || last.routesVersion !== routesVersion) return false;
        for (const type of Object.keys(snapshot.resources) as ResourceType[]) {
          if ((last.held[SHORT_NAMES[type]] ?? 0) !== snapshot.resources[type].size) return false;
        }
        return performance.now() - quietSince > 300;
      },
      `the ${mode} fake Envoy to converge`,
      { intervalMs: 25, timeoutMs },
    ).catch((err: Error) => {
      throw new Error(`${err.message}; ${expected()}`);
    });
  }

  /** Returns and forgets the responses seen so far. */
  take(): PhaseSizes {
    const lines = this.lines.splice(0);
    const byType: Record<string, { responses: number; largestBytes: number; totalBytes: number }> = {};
    let largest: FakeEnvoyLine | undefined;
    for (const line of lines) {
      const entry = (byType[line.type] ??= { responses: 0, largestBytes: 0, totalBytes: 0 });
      entry.responses += 1;
      entry.totalBytes += line.bytes;
      entry.largestBytes = Math.max(entry.largestBytes, line.bytes);
      if (largest === undefined || line.bytes > largest.bytes) largest = line;
    }
    return {
      responses: lines.length,
      largestBytes: largest?.bytes ?? 0,
      largestType: largest?.type ?? '',
      byType,
    };
  }

  stop(): void {
    this.child.kill('SIGTERM');
  }
}

function largestResource(snapshot: Snapshot): { type: string; name: string; bytes: number } {
  let largest = { type: '', name: '', bytes: 0 };
  for (const [type, resources] of Object.entries(snapshot.resources)) {
    for (const resource of resources.values()) {
      if (resourceBytes(resource).length > largest.bytes)
        largest = {
          type: SHORT_NAMES[type as ResourceType],
          name: resource.name,
          bytes: resourceBytes(resource).length,
        };
    }
  }
  return largest;
}

async function main(): Promise<void> {
  const args = parseArgs();
  const routeCount = numberArg(args, 'routes');
  const tag = `control-plane ${routeCount}`;
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-bench-cp-'));
  const configPath = join(dir, 'config.yaml');
  const base = { address: '127.0.0.1:8080' };
  const routes = generatedRoutes(routeCount, COMPILE_SHAPE);
  writeFileSync(configPath, configYaml(base, routes));
  const store = new SnapshotStore();
  const reloader = new Reloader({
    configPath,
    env: {},
    translate: {
      systemCaFile: '/etc/ssl/certs/ca-certificates.crt',
      internal: {
        authorize: { host: '127.0.0.1', port: 5443 },
        authorizeTimeoutMs: 10_000,
        jwksJson: BENCH_JWKS,
      },
    },
    store,
    logger: silentLogger,
    debounceMs: 0,
  });
  const ads = new AdsServer({ source: store, logger: silentLogger });
  const server = new grpc.Server({ 'grpc.max_send_message_length': 16 * 1024 * 1024 });
  ads.register(server);
  const clients: FakeEnvoy[] = [];
  try {
    reloader.loadInitial();
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) =>
        err === null ? resolve(bound) : reject(err),
      ),
    );
    const address = `127.0.0.1:${port}`;
    const timeoutMs = 60_000 + routeCount * 10;
    const change = (i: number): Snapshot => {
      routes[Math.min(i, routeCount - 1)] = routeYaml(
        `changed-${i}.bench.test`,
        ['10.255.0.1:8080', '10.255.0.2:8080'],
        COMPILE_SHAPE,
      );
      if (routeCount === 0)
        routes.push(
          routeYaml(`changed-${i}.bench.test`, ['10.255.0.1:8080', '10.255.0.2:8080'], COMPILE_SHAPE),
        );
      writeFileSync(configPath, configYaml(base, routes));
      const result = reloader.reload();
      if (!result.ok) throw new Error(`reload failed: ${JSON.stringify(result.problems.slice(0, 3))}`);
      return result.snapshot;
    };

    const delta = new FakeEnvoy(address, 'delta');
    clients.push(delta);
    let snapshot = store.current() as Snapshot;
    await delta.converged(snapshot, 'delta', timeoutMs);
    const deltaInitial = delta.take();
    await collectGarbage();
    const usage = process.memoryUsage();
    const memory: MemoryReading = {
      heapUsed: usage.heapUsed,
      external: usage.external,
      arrayBuffers: usage.arrayBuffers,
      rss: usage.rss,
    };
    progress(
      tag,
      `converged (delta); heap ${(usage.heapUsed / 2 ** 20).toFixed(1)} MiB, rss ${(usage.rss / 2 ** 20).toFixed(1)} MiB`,
    );
    snapshot = change(1);
    await delta.converged(snapshot, 'delta', timeoutMs);
    const deltaChange = delta.take();
    delta.stop();

    const sotw = new FakeEnvoy(address, 'sotw');
    clients.push(sotw);
    await sotw.converged(snapshot, 'sotw', timeoutMs);
    const sotwInitial = sotw.take();
    snapshot = change(2);
    await sotw.converged(snapshot, 'sotw', timeoutMs);
    const sotwChange = sotw.take();
    progress(
      tag,
      `largest delta response ${deltaInitial.largestBytes} B, SotW ${sotwInitial.largestBytes} B`,
    );

    const result: ControlPlaneResult = {
      routes: routeCount,
      memory,
      largestResource: largestResource(snapshot),
      routeConfigurationBytes: [
        ...snapshot.resources[ROUTE_CONFIGURATION_TYPE].values(),
        ...snapshot.resources[SCOPED_ROUTE_CONFIGURATION_TYPE].values(),
      ].reduce((sum, resource) => sum + resourceBytes(resource).length, 0),
      sotwCdsBodyBytes: prepare(snapshot).type(CLUSTER_TYPE).fullSotwBody().length,
      maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES,
      delta: { initial: deltaInitial, oneRouteChange: deltaChange },
      sotw: { initial: sotwInitial, oneRouteChange: sotwChange },
    };
    writeResult(args, result);
  } finally {
    for (const client of clients) client.stop();
    reloader.close();
    ads.close();
    server.forceShutdown();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

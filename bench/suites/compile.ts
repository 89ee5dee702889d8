/**
 * Compile benchmark for one route count, in its own process: parse (file -> Config), then
 * "compile" = translate + compile + buildSnapshot + consistency check (Config -> encoded, versioned,
 * checked snapshot), each phase timed. Warm-up passes run first (JIT), then the timed passes, each
 * on a freshly parsed config whose parse garbage is collected before the clock starts (see
 * `freshConfig`); the collections a pass's own allocation causes land in the pass.
 * Also times the pre-optimization snapshot build (protobufjs fromObject/encode) as a same-run
 * baseline, and checks that both encoders give identical bytes for every resource.
 *
 *   node --import tsx bench/suites/compile.ts --routes=10000 --runs=9 --warmup=3 --parse-runs=5
 */
import { BENCH_JWKS } from '../lib/config-gen.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { forgetEarlierLoads, loadConfigFile } from '../../src/config/load-file.js';
import { buildFromConfig } from '../../src/runtime/build-pipeline.js';
import type { Config } from '../../src/config/types.js';
import { translate } from '../../src/translate/translate.js';
import { encodeMessageReference } from '../../src/xds/codec/codec.js';
import { RESOURCE_TYPES, ROUTE_CONFIGURATION_TYPE } from '../../src/xds/codec/type-urls.js';
import { compile } from '../../src/xds/compile/compile.js';
import { buildSnapshot } from '../../src/xds/snapshot/build-snapshot.js';
import { resourceBytes } from '../../src/xds/snapshot/snapshot-entry.js';
import type { Snapshot } from '../../src/xds/snapshot/types.js';
import { numberArg, parseArgs, progress } from '../lib/child.js';
import { COMPILE_SHAPE, configYaml, generatedRoutes } from '../lib/config-gen.js';
import { writeResult } from '../lib/output.js';
import { referenceSnapshotBytes } from '../lib/reference-snapshot.js';
import { withBuiltMessages } from '../../src/xds/compile/lazy-resource.js';
import { summarize, type Summary } from '../lib/stats.js';

/** As the runtime compiles: with authorization (ext_authz filter, per-route settings, JWKS route). */
const TRANSLATE_OPTIONS = {
  systemCaFile: '/etc/ssl/certs/ca-certificates.crt',
  internal: {
    authorize: { host: '127.0.0.1', port: 5443 },
    authorizeTimeoutMs: 10_000,
    jwksJson: BENCH_JWKS,
  },
};

/** Phase timings of one compile pass, in milliseconds. */
interface Pass {
  translate: number;
  compile: number;
  consistency: number;
  snapshot: number;
  total: number;
}

/** What this suite reports for one route count. */
export interface CompileResult {
  readonly routes: number;
  readonly configBytes: number;
  /** Absent when the child was asked for no timed parse runs. */
  readonly parse: Summary | undefined;
  readonly total: Summary;
  readonly phases: Record<'translate' | 'compile' | 'consistency' | 'snapshot', Summary>;
  /** The pre-optimization snapshot build (protobufjs), same process, same compiled input. */
  readonly referenceSnapshot: Summary;
  readonly resources: number;
  readonly encodedBytes: number;
  readonly routeConfigurationBytes: number;
  readonly largestResource: { readonly type: string; readonly name: string; readonly bytes: number };
  readonly encodersAgree: boolean;
}

/**
 * One pass of the reload pipeline's stages after parsing (`buildFromConfig`, the very function a
 * reload runs, with its consistency check's state kept between passes as in production).
 */
function onePass(config: Config): Pass {
  const t0 = performance.now();
  const built = buildFromConfig(config, TRANSLATE_OPTIONS);
  const total = performance.now() - t0;
  if (!built.ok) throw new Error(`${built.stage} failed: ${JSON.stringify(built.problems.slice(0, 3))}`);
  const { translate, compile, check, snapshot } = built.timingsMs;
  return { translate, compile, consistency: check, snapshot, total };
}

/** How long a pass waits after the full GC before it starts (see `freshConfig`). */
const SWEEP_SETTLE_MS = 50;

async function main(): Promise<void> {
  const args = parseArgs();
  const routes = numberArg(args, 'routes');
  const runs = numberArg(args, 'runs', 9);
  const warmup = numberArg(args, 'warmup', 3);
  const parseRuns = numberArg(args, 'parse-runs', 5);
  const tag = `compile ${routes}`;
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-bench-compile-'));
  try {
    const path = join(dir, 'config.yaml');
    const text = configYaml({ address: '127.0.0.1:8080' }, generatedRoutes(routes, COMPILE_SHAPE));
    writeFileSync(path, text);

    const parseTimes: number[] = [];
    let config: Config | undefined;
    for (let i = 0; i <= parseRuns; i++) {
      // parse-runs=0: one untimed parse, for callers that time parsing in another child.
      // Every parse is cold: a reload reuses earlier work, which is not what this times.
      forgetEarlierLoads();
      const t0 = performance.now();
      const loaded = loadConfigFile(path, {});
      if (i > 0) parseTimes.push(performance.now() - t0); // the first parse warms the YAML parser's JIT
      if (loaded.config === undefined)
        throw new Error(`config invalid: ${JSON.stringify(loaded.problems.slice(0, 3))}`);
      config = loaded.config;
    }
    if (config === undefined) throw new Error('no parse run');
    if (parseTimes.length > 0) progress(tag, `parse median ${summarize(parseTimes).median} ms`);

    // Each pass compiles a freshly parsed Config: the pipeline remembers its work per route object
    // (what makes a reload fast), and a pass over the same objects would time that, not a build.
    const freshConfig = async (): Promise<Config> => {
      forgetEarlierLoads();
      const loaded = loadConfigFile(path, {});
      if (loaded.config === undefined) throw new Error('config invalid');
      // The parse's garbage is the parse's cost (timed above), not the compile's: collect it, and
      // give V8's concurrent sweeper time to return its pages. Timed at once, the first phase paid
      // for sweeping the parse's garbage, a cost that grows with the config (~50 ms at 10,000
      // routes), so the compile looked worse than linear.
      (globalThis as { gc?: () => void }).gc?.();
      await new Promise((resolve) => setTimeout(resolve, SWEEP_SETTLE_MS));
      return loaded.config;
    };
    for (let i = 0; i < warmup; i++) onePass(await freshConfig());
    const passes: Pass[] = [];
    for (let i = 0; i < runs; i++) passes.push(onePass(await freshConfig()));
    progress(tag, `compile median ${summarize(passes.map((p) => p.total)).median} ms`);

    const ir = translate(config, TRANSLATE_OPTIONS).ir;
    if (ir === undefined) throw new Error('translate failed');
    const compiled = withBuiltMessages(compile(ir));
    const snapshot = buildSnapshot(compiled);
    const referenceTimes: number[] = [];
    for (let i = 0; i < warmup + runs; i++) {
      const t0 = performance.now();
      referenceSnapshotBytes(compiled);
      if (i >= warmup) referenceTimes.push(performance.now() - t0); // the same warm-up as the timed passes
    }

    let encodersAgree = true;
    let encodedBytes = 0;
    let resources = 0;
    let largest = { type: '', name: '', bytes: 0 };
    for (const type of RESOURCE_TYPES) {
      for (const { name, message } of compiled[type]) {
        const held = snapshot.resources[type].get(name);
        const bytes = held === undefined ? undefined : resourceBytes(held);
        if (
          bytes === undefined ||
          !Buffer.from(bytes).equals(Buffer.from(encodeMessageReference(type, message)))
        )
          encodersAgree = false;
        const size = bytes?.length ?? 0;
        encodedBytes += size;
        resources += 1;
        if (size > largest.bytes) largest = { type, name, bytes: size };
      }
    }
    const result: CompileResult = {
      routes,
      configBytes: Buffer.byteLength(text),
      parse: parseTimes.length > 0 ? summarize(parseTimes) : undefined,
      total: summarize(passes.map((p) => p.total)),
      phases: {
        translate: summarize(passes.map((p) => p.translate)),
        compile: summarize(passes.map((p) => p.compile)),
        consistency: summarize(passes.map((p) => p.consistency)),
        snapshot: summarize(passes.map((p) => p.snapshot)),
      },
      referenceSnapshot: summarize(referenceTimes),
      resources,
      encodedBytes,
      routeConfigurationBytes: ingressBytes(snapshot),
      largestResource: largest,
      encodersAgree,
    };
    writeResult(args, result);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

/** Size of the single RouteConfiguration (`ingress`), 0 under per-host delivery. */
function ingressBytes(snapshot: Snapshot): number {
  const ingress = snapshot.resources[ROUTE_CONFIGURATION_TYPE].get('ingress');
  return ingress === undefined ? 0 : resourceBytes(ingress).length;
}

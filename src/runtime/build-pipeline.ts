import { errorMessage, type Problem } from '../shared/errors.js';
import { loadConfigFile } from '../config/load-file.js';
import type { RouteCache } from '../config/parse-config.js';
import type { Config } from '../config/types.js';
import type { IR } from '../ir/types.js';
import { translate, type TranslateOptions } from '../translate/translate.js';
import { compile } from '../xds/compile/compile.js';
import type { CompiledResources } from '../proto/compiled.js';
import { buildSnapshot, type EncodeCache } from '../xds/snapshot/build-snapshot.js';
import { checkConsistency } from '../xds/snapshot/consistency.js';
import type { Snapshot } from '../xds/snapshot/types.js';

/** What one pass of the pipeline reads. */
export interface BuildInput {
  readonly configPath: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Translate's inputs from the outside world, or how to derive them from the parsed config. */
  readonly translate: TranslateOptions | ((config: Config) => TranslateOptions);
  /** Bytes the caller already read (absolute path -> bytes): parsed instead of read again. */
  readonly read?: ReadonlyMap<string, Buffer>;
  /**
   * Awaited by `buildYielding` between parse and translate, with the parsed config: the first
   * load uses it to make what translate needs from the config itself asynchronously (the TLS that
   * `tls_derive` derives). A rejection fails the pass at translate. `build` (synchronous) ignores it.
   */
  readonly prepare?: (config: Config) => Promise<void>;
  /**
   * Test seam at the compile stage: rewrites the compiled resources before the consistency check
   * (tests make a resource Envoy rejects that validation lets through). Never set in production.
   */
  readonly afterCompile?: (compiled: CompiledResources) => CompiledResources;
}

/** A pass in which every stage succeeded: what it made, and what the next pass may reuse. */
export interface GoodBuild {
  readonly ok: true;
  readonly config: Config;
  /** The IR the snapshot was compiled from (compile is pure: `compile(ir)` gives its messages again). */
  readonly ir: IR;
  readonly snapshot: Snapshot;
  /** The snapshot's encodings by content, handed to the next pass (see `EncodeCache`). */
  readonly encodeCache: EncodeCache;
  /** The validated routes by content, handed to the next pass's parse (see `RouteCache`). */
  readonly routeCache: RouteCache;
  readonly warnings: readonly Problem[];
  readonly filesRead: readonly string[];
  /** Milliseconds spent per stage, for the reload log line and benchmarks. */
  readonly timingsMs: StageTimings;
}

/**
 * A pass that stopped at `stage`, with every problem found there. `publish` and `envoy` are the
 * reload loop's: a subscriber refused the build (see `BuildSubscriber`), or Envoy NACKed it.
 */
export interface FailedBuild {
  readonly ok: false;
  readonly stage: 'parse' | 'translate' | 'compile' | 'publish' | 'envoy';
  readonly problems: readonly Problem[];
  readonly warnings: readonly Problem[];
  readonly filesRead: readonly string[];
}

/** Everything one pass of the pipeline produced; a snapshot only when every stage succeeded. */
export type BuildResult = GoodBuild | FailedBuild;

/** Wall-clock milliseconds of each stage of one successful pass. */
export interface StageTimings {
  readonly parse: number;
  readonly translate: number;
  readonly compile: number;
  /** The consistency check of the compiled resources. */
  readonly check: number;
  readonly snapshot: number;
}

/**
 * config file + env -parse-> Config -translate-> IR -compile-> resources -check-> -snapshot->
 * Snapshot (published by the caller). Any stage's problems stop the pass, so nothing half-built
 * is ever published. `previous` is the last good build: its validated routes and its encodings
 * are reused for routes and resources whose content did not change (the only memory between
 * passes, and it is the caller's). Same input, same result, with or without `previous`.
 */
export function build(input: BuildInput, previous?: GoodBuild): BuildResult {
  const stages = buildStages(input, previous);
  for (;;) {
    const step = stages.next();
    if (step.done === true) return step.value;
  }
}

/**
 * `build`, giving the event loop a turn between stages, so a large config (10,000 routes: about
 * 0.4 s in all) never holds ext_authz Checks and ADS answers for longer than its longest stage.
 * The reload loop uses it for changes it notices; the result equals `build`'s.
 */
export async function buildYielding(input: BuildInput, previous?: GoodBuild): Promise<BuildResult> {
  const stages = buildStages(input, previous);
  let prepared: unknown;
  for (;;) {
    const step = stages.next(prepared);
    if (step.done === true) return step.value;
    prepared = undefined;
    if (step.value !== undefined && input.prepare !== undefined) {
      prepared = await input.prepare(step.value).then(
        () => undefined,
        (err: unknown) => err ?? new Error('prepare failed'),
      );
    } else await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** The pipeline as a generator that pauses (yields) between stages; timings leave the pauses out. */
function* buildStages(
  input: BuildInput,
  previous: GoodBuild | undefined,
): Generator<Config | undefined, BuildResult, unknown> {
  let stageStart = performance.now();
  const took = (): number => span(stageStart, performance.now());
  const { config, problems, warnings, filesRead, routeCache } = loadConfigFile(
    input.configPath,
    input.env,
    input.read,
    previous?.routeCache,
  );
  const parse = took();
  const fail = (stage: FailedBuild['stage'], found: readonly Problem[]): FailedBuild => ({
    ok: false,
    stage,
    problems: found,
    warnings,
    filesRead,
  });
  if (config === undefined) return fail('parse', problems);
  // The caller may prepare for this config here (buildYielding's `prepare`); it sends back its error.
  const prepareError = yield config;
  if (prepareError !== undefined)
    return fail('translate', [{ path: '', message: errorMessage(prepareError) }]);
  stageStart = performance.now();
  let translated: ReturnType<typeof translate>;
  try {
    translated = translate(
      config,
      typeof input.translate === 'function' ? input.translate(config) : input.translate,
    );
  } catch (err) {
    return fail('translate', [{ path: '', message: errorMessage(err) }]);
  }
  const translateMs = took();
  const ir = translated.ir;
  if (ir === undefined) return fail('translate', translated.problems);
  yield undefined;
  try {
    stageStart = performance.now();
    const compiled = input.afterCompile === undefined ? compile(ir) : input.afterCompile(compile(ir));
    const compileMs = took();
    stageStart = performance.now();
    const inconsistent = checkConsistency(compiled);
    const check = took();
    if (inconsistent.length > 0) return fail('compile', inconsistent);
    yield;
    stageStart = performance.now();
    const { snapshot, cache } = buildSnapshot(compiled, previous?.encodeCache);
    return {
      ok: true,
      config,
      ir,
      snapshot,
      encodeCache: cache,
      routeCache,
      warnings,
      filesRead,
      timingsMs: { parse, translate: translateMs, compile: compileMs, check, snapshot: took() },
    };
  } catch (err) {
    return fail('compile', [{ path: '', message: errorMessage(err) }]);
  }
}

/** Milliseconds from `from` to `to` (performance.now() readings), to 0.1 ms. */
function span(from: number, to: number): number {
  return Math.round((to - from) * 10) / 10;
}

import { errorMessage, type Problem } from '../shared/errors.js';
import type { IR } from '../ir/types.js';
import type { KeyRing } from '../keys/key-ring.js';
import {
  translateFile,
  type PushedDocument,
  type TranslateExternals,
  type TranslateMemo,
} from '../translate/from-file.js';
import { compileWithMemo, type CompileMemo } from '../xds/compile/compile.js';
import type { CompiledResources } from '../proto/compiled.js';
import { buildSnapshot, type EncodeCache } from '../xds/snapshot/build-snapshot.js';
import { checkConsistencyWithMemo, type ConsistencyMemo } from '../xds/snapshot/consistency.js';
import type { Snapshot } from '../xds/snapshot/types.js';

/** What one pass of the pipeline reads. */
export interface BuildInput {
  readonly configPath: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Translate's inputs from outside the file, or how to get them for each pass. */
  readonly translate: TranslateExternals | (() => TranslateExternals);
  /** Bytes the caller already read (absolute path -> bytes): parsed instead of read again. */
  readonly read?: ReadonlyMap<string, Buffer>;
  /** A config source's document, built instead of the file (`configPath` then names the source). */
  readonly pushed?: PushedDocument;
  /**
   * Test seam at the compile stage: rewrites the compiled resources before the consistency check
   * (tests make a resource Envoy rejects that validation lets through). Never set in production.
   */
  readonly afterCompile?: (compiled: CompiledResources) => CompiledResources;
}

/** A pass in which every stage succeeded: what it made, and what the next pass may reuse. */
export interface GoodBuild {
  readonly ok: true;
  /** The IR the snapshot was compiled from (compile is pure: `compile(ir)` gives its messages again). */
  readonly ir: IR;
  /** Every key and secret the services use for this config (keys/key-ring.ts). */
  readonly keys: KeyRing;
  readonly snapshot: Snapshot;
  /** What the next pass may reuse, stage by stage (see `BuildMemo`). */
  readonly memo: BuildMemo;
  readonly warnings: readonly Problem[];
  readonly filesRead: readonly string[];
  /** Milliseconds spent per stage, for the reload log line and benchmarks. */
  readonly timingsMs: StageTimings;
  /** What this pass did that it could not take from `previous`, for the reload log line and tests. */
  readonly work: BuildWork;
}

/**
 * What one pass hands the next, one entry per stage, each holding that pass's entries only (so
 * the memory between passes never grows past one config's worth) and each keyed by content: parse
 * by the route's text, translate by the settings object parse gave back plus a key of the global
 * settings, compile by the IR object translate gave back, the check by the compiled resource,
 * the snapshot by the resource's content key. The caller keeps it inside its last good build.
 */
export interface BuildMemo {
  readonly translate: TranslateMemo;
  readonly compile: CompileMemo;
  readonly check: ConsistencyMemo;
  readonly encode: EncodeCache;
}

/**
 * The work of one pass: how many of each unit it made rather than took from the previous pass's
 * memo. A reload that changes one route validates and translates 1 route, compiles 1 cluster and
 * 1 host, and encodes that host's RouteConfiguration, the Cluster and its ClusterLoadAssignment;
 * an unchanged reload does none of it; a change to global settings redoes the stages that read it.
 */
export interface BuildWork {
  readonly routesValidated: number;
  readonly routesTranslated: number;
  readonly clustersCompiled: number;
  readonly hostsCompiled: number;
  readonly resourcesEncoded: number;
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
 * is ever published. `previous` is the last good build: its memo (`BuildMemo`) is reused for
 * routes, hosts, clusters and resources whose content did not change (the only memory between
 * passes, and it is the caller's), and what those give is the identical object `previous` holds
 * (IR clusters and virtual hosts, encoded resources). Same input, same result, with or without
 * `previous`; `work` counts what was made anew.
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
  for (;;) {
    const step = stages.next();
    if (step.done === true) return step.value;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** The pipeline as a generator that pauses (yields) between stages; timings leave the pauses out. */
function* buildStages(
  input: BuildInput,
  previous: GoodBuild | undefined,
): Generator<void, BuildResult, void> {
  let stageStart = performance.now();
  const took = (): number => span(stageStart, performance.now());
  const externals = typeof input.translate === 'function' ? input.translate() : input.translate;
  const file = translateFile(input, externals, previous?.memo.translate);
  let step = file.next();
  const parse = took();
  if (step.done !== true) {
    yield;
    stageStart = performance.now();
    step = file.next();
  }
  // translateFile pauses once, after parse; a second pause would be a bug there.
  if (step.done !== true) throw new Error('translateFile paused twice');
  const translated = step.value;
  const translateMs = step.value.ok || step.value.stage === 'translate' ? took() : 0;
  const { warnings, filesRead } = translated;
  const fail = (stage: FailedBuild['stage'], found: readonly Problem[]): FailedBuild => ({
    ok: false,
    stage,
    problems: found,
    warnings,
    filesRead,
  });
  if (!translated.ok) return fail(translated.stage, translated.problems);
  const { ir, keys, memo } = translated;
  yield;
  try {
    stageStart = performance.now();
    const made = compileWithMemo(ir, previous?.memo.compile);
    const compiled = input.afterCompile === undefined ? made.resources : input.afterCompile(made.resources);
    const compileMs = took();
    stageStart = performance.now();
    const checked = checkConsistencyWithMemo(compiled, previous?.memo.check);
    const check = took();
    if (checked.problems.length > 0) return fail('compile', checked.problems);
    yield;
    stageStart = performance.now();
    const { snapshot, cache, encoded } = buildSnapshot(compiled, previous?.memo.encode);
    return {
      ok: true,
      ir,
      keys,
      memo: { translate: memo, compile: made.memo, check: checked.memo, encode: cache },
      snapshot,
      warnings,
      filesRead,
      timingsMs: { parse, translate: translateMs, compile: compileMs, check, snapshot: took() },
      work: {
        ...translated.work,
        clustersCompiled: made.clustersCompiled,
        hostsCompiled: made.hostsCompiled,
        resourcesEncoded: encoded,
      },
    };
  } catch (err) {
    return fail('compile', [{ path: '', message: errorMessage(err) }]);
  }
}

/** Milliseconds from `from` to `to` (performance.now() readings), to 0.1 ms. */
function span(from: number, to: number): number {
  return Math.round((to - from) * 10) / 10;
}

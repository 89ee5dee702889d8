import { errorMessage, type Problem } from '../shared/errors.js';
import type { IR } from '../ir/types.js';
import type { KeyRing } from '../keys/key-ring.js';
import { translateFile, type TranslateExternals, type TranslateMemo } from '../translate/from-file.js';
import { compile } from '../xds/compile/compile.js';
import type { CompiledResources } from '../proto/compiled.js';
import { buildSnapshot, type EncodeCache } from '../xds/snapshot/build-snapshot.js';
import { checkConsistency } from '../xds/snapshot/consistency.js';
import type { Snapshot } from '../xds/snapshot/types.js';

/** What one pass of the pipeline reads. */
export interface BuildInput {
  readonly configPath: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Translate's inputs from outside the file, or how to get them for each pass. */
  readonly translate: TranslateExternals | (() => TranslateExternals);
  /** Bytes the caller already read (absolute path -> bytes): parsed instead of read again. */
  readonly read?: ReadonlyMap<string, Buffer>;
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
  /** The snapshot's encodings by content, handed to the next pass (see `EncodeCache`). */
  readonly encodeCache: EncodeCache;
  /** What the next pass's parse and translate may reuse (validated routes, the key ring). */
  readonly memo: TranslateMemo;
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
  const file = translateFile(input, externals, previous?.memo);
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
      ir,
      keys,
      memo,
      snapshot,
      encodeCache: cache,
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

import type { Problem } from '../shared/errors.js';
import { loadConfigFile } from '../config/load-file.js';
import type { Config } from '../config/types.js';
import type { IR } from '../ir/types.js';
import { translate, type TranslateOptions } from '../translate/translate.js';
import { compileBuild, type CompiledResources } from '../xds/compile/compile.js';
import { buildSnapshot } from '../xds/snapshot/build-snapshot.js';
import { IncrementalConsistencyCheck } from '../xds/snapshot/consistency.js';
import type { Snapshot } from '../xds/snapshot/types.js';
import { errorMessage } from '../shared/errors.js';

/** Everything one pass of the pipeline produced; `snapshot` only when every stage succeeded. */
export type BuildResult =
  | {
      readonly ok: true;
      readonly config: Config;
      readonly ir: IR;
      readonly compiled: CompiledResources;
      readonly snapshot: Snapshot;
      readonly warnings: readonly Problem[];
      readonly filesRead: readonly string[];
      /** Milliseconds spent per stage, for the reload log line and benchmarks. */
      readonly timingsMs: StageTimings;
    }
  | {
      readonly ok: false;
      readonly stage: 'parse' | 'translate' | 'compile';
      readonly problems: readonly Problem[];
      readonly warnings: readonly Problem[];
      readonly filesRead: readonly string[];
    };

/** Wall-clock milliseconds of each stage of one successful pass. */
export interface StageTimings {
  readonly parse: number;
  readonly translate: number;
  readonly compile: number;
  /** The consistency check of the compiled resources (`IncrementalConsistencyCheck`). */
  readonly check: number;
  readonly snapshot: number;
}

/** What `buildFromConfig` gives: the stages after parsing, and their timings (parse is 0 there). */
export type ConfigBuildResult =
  | {
      readonly ok: true;
      readonly ir: IR;
      readonly compiled: CompiledResources;
      readonly snapshot: Snapshot;
      readonly timingsMs: StageTimings;
    }
  | { readonly ok: false; readonly stage: 'translate' | 'compile'; readonly problems: readonly Problem[] };

/** Checks each build against the last passing one (what a reload changed), as the full check would. */
const consistency = new IncrementalConsistencyCheck();

/** Milliseconds from `from` to `to` (performance.now() readings), to 0.1 ms. */
function span(from: number, to: number): number {
  return Math.round((to - from) * 10) / 10;
}

/**
 * config file + env -parse-> Config -translate-> IR -compile-> resources -snapshot-> Snapshot
 * -check-> (published by the caller).
 * Any stage's problems stop the pass, so nothing half-built is ever published. `read` may hold
 * the config file's bytes, already read by the caller (absolute path -> bytes; see `loadConfigFile`).
 */
export function buildFromFile(
  configPath: string,
  env: Readonly<Record<string, string | undefined>>,
  options: TranslateOptions | ((config: Config) => TranslateOptions),
  read?: ReadonlyMap<string, Buffer>,
): BuildResult {
  const started = performance.now();
  const loaded = loadConfigFile(configPath, env, read);
  const parsed = performance.now();
  const { warnings, filesRead } = loaded;
  if (loaded.config === undefined)
    return { ok: false, stage: 'parse', problems: loaded.problems, warnings, filesRead };
  let translateOptions: TranslateOptions;
  try {
    translateOptions = typeof options === 'function' ? options(loaded.config) : options;
  } catch (err) {
    return {
      ok: false,
      stage: 'translate',
      problems: [{ path: '', message: errorMessage(err) }],
      warnings,
      filesRead,
    };
  }
  const built = buildFromConfig(loaded.config, translateOptions);
  if (!built.ok) return { ...built, warnings, filesRead };
  return {
    ok: true,
    config: loaded.config,
    ir: built.ir,
    compiled: built.compiled,
    snapshot: built.snapshot,
    warnings,
    filesRead,
    timingsMs: { ...built.timingsMs, parse: span(started, parsed) },
  };
}

/**
 * Config -translate-> IR -compile-> resources -snapshot-> Snapshot -check->: the stages of
 * `buildFromFile` after parsing, with the same process-wide memory of earlier builds (each stage's
 * reuse, and the consistency check's state). Exported so the compile benchmark times exactly what
 * a reload runs.
 */
export function buildFromConfig(config: Config, options: TranslateOptions): ConfigBuildResult {
  const started = performance.now();
  const translated = translate(config, options);
  const translatedAt = performance.now();
  if (translated.ir === undefined) return { ok: false, stage: 'translate', problems: translated.problems };
  try {
    // Nothing translated is an object an earlier build saw: the stages need not look for reuse.
    const reuse = translated.reusedRoutes > 0;
    const { resources: compiled, encodeOrder } = compileBuild(translated.ir, {
      reuse,
      clusterOrder: translated.clusterBuildOrder,
      hostOrder: translated.hostBuildOrder,
    });
    const compiledAt = performance.now();
    // Encoded before the check: encoding builds each new message once and keeps the facts the
    // check reads (see LazyResource), where checking first would build them twice. A snapshot
    // that fails the check is dropped here, never published.
    const snapshot = buildSnapshot(compiled, { reuse, encodeOrder });
    const encodedAt = performance.now();
    const problems = consistency.check(compiled);
    if (problems.length > 0) return { ok: false, stage: 'compile', problems };
    return {
      ok: true,
      ir: translated.ir,
      compiled,
      snapshot,
      timingsMs: {
        parse: 0,
        translate: span(started, translatedAt),
        compile: span(translatedAt, compiledAt),
        snapshot: span(compiledAt, encodedAt),
        check: span(encodedAt, performance.now()),
      },
    };
  } catch (err) {
    return { ok: false, stage: 'compile', problems: [{ path: '', message: errorMessage(err) }] };
  }
}

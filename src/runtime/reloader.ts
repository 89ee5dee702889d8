import { formatProblem, ValidationError, type Problem } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import type { TranslateOptions } from '../translate/translate.js';
import type { Config } from '../config/types.js';
import type { SnapshotStore } from '../xds/snapshot/snapshot-store.js';
import { build, type BuildInput, type BuildResult, type GoodBuild } from './build-pipeline.js';
import { FileWatcher } from './file-watcher.js';

/** Counters and state of the reload loop, for logs, tests and (later) metrics. */
export interface ReloadStats {
  readonly reloads: number;
  readonly failures: number;
  readonly lastSuccess: boolean;
  readonly activeVersion: string | undefined;
  readonly lastProblems: readonly Problem[];
}

/**
 * The reload loop: watch -> parse -> translate -> compile -> publish, or keep the last good
 * snapshot. An invalid change is logged once with every problem and its key path and never
 * reaches Envoy; the next valid change goes live within the watcher's debounce.
 */
export class Reloader {
  private readonly watcher: FileWatcher;
  private stats: ReloadStats = {
    reloads: 0,
    failures: 0,
    lastSuccess: true,
    activeVersion: undefined,
    lastProblems: [],
  };
  private lastGood: GoodBuild | undefined;

  constructor(
    private readonly options: {
      readonly configPath: string;
      readonly env: Readonly<Record<string, string | undefined>>;
      readonly translate: TranslateOptions | ((config: Config) => TranslateOptions);
      readonly store: SnapshotStore;
      readonly logger: Logger;
      readonly debounceMs?: number;
      readonly onReload?: (result: BuildResult) => void;
      /** Called with each accepted build before its snapshot reaches Envoy (authorization state first). */
      readonly beforePublish?: (result: GoodBuild) => void;
    },
  ) {
    this.watcher = new FileWatcher((changed) => this.reload(changed), {
      debounceMs: options.debounceMs ?? 50,
    });
  }

  /** Loads the config for the first time; throws ValidationError when it is invalid (nothing to keep). */
  loadInitial(): GoodBuild {
    const result = build(this.input());
    this.logWarnings(result.warnings);
    if (!result.ok) throw new ValidationError(result.problems, this.options.configPath);
    this.accept(result);
    this.watcher.watch(result.filesRead);
    this.options.onReload?.(result);
    return result;
  }

  /**
   * Re-runs the pipeline now (file change, SIGHUP); returns the result. `read` holds bytes the
   * watcher just read and compared (absolute path -> bytes): the config file is parsed from them
   * rather than read again.
   */
  reload(read?: ReadonlyMap<string, Buffer>): BuildResult {
    const result = build(this.input(read), this.lastGood);
    this.logWarnings(result.warnings);
    if (result.ok) {
      const installStarted = performance.now();
      const changed = this.accept(result);
      this.options.logger.info(
        {
          version: result.snapshot.version,
          routes: result.config.routes.length,
          changed,
          ms: { ...result.timingsMs, publish: Math.round((performance.now() - installStarted) * 10) / 10 },
        },
        changed ? 'config reloaded' : 'config reloaded, no change',
      );
    } else {
      this.stats = {
        ...this.stats,
        failures: this.stats.failures + 1,
        lastSuccess: false,
        lastProblems: result.problems,
      };
      this.options.logger.error(
        {
          config: this.options.configPath,
          stage: result.stage,
          problems: result.problems.map(formatProblem),
          keeping: this.stats.activeVersion,
        },
        'config reload rejected; the last good config keeps serving',
      );
    }
    // Watch whatever the newest config references (a new CA file, say), even when it was rejected.
    this.watcher.watch([...new Set([...(this.lastGood?.filesRead ?? []), ...result.filesRead])]);
    this.options.onReload?.(result);
    return result;
  }

  current(): ReloadStats {
    return this.stats;
  }

  lastGoodBuild(): GoodBuild | undefined {
    return this.lastGood;
  }

  close(): void {
    this.watcher.close();
  }

  /** The pipeline's input: the config, the environment, translate's options, and bytes already read. */
  private input(read?: ReadonlyMap<string, Buffer>): BuildInput {
    const { configPath, env, translate } = this.options;
    return read === undefined ? { configPath, env, translate } : { configPath, env, translate, read };
  }

  private accept(result: GoodBuild): boolean {
    this.lastGood = result;
    this.options.beforePublish?.(result);
    const changed = this.options.store.publish(result.snapshot);
    this.stats = {
      reloads: this.stats.reloads + 1,
      failures: this.stats.failures,
      lastSuccess: true,
      activeVersion: result.snapshot.version,
      lastProblems: [],
    };
    return changed;
  }

  private logWarnings(warnings: readonly Problem[]): void {
    for (const warning of warnings)
      this.options.logger.warn({ key: warning.path, line: warning.line }, formatProblem(warning));
  }
}

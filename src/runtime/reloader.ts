import { randomBytes } from 'node:crypto';
import { ValidationError, type Problem } from '../shared/errors.js';
import type { PushedDocument, TranslateExternals } from '../translate/from-file.js';
import {
  build,
  buildYielding,
  type BuildInput,
  type BuildResult,
  type FailedBuild,
  type GoodBuild,
} from './build-pipeline.js';
import { BuildWorker, type WorkerBuild } from './build-worker.js';
import { newlyPublic, type NewlyPublic } from './exposure.js';
import { FileWatcher } from './file-watcher.js';
import type { ReloaderOptions } from './reloader-options.js';

export type { ReloaderOptions } from './reloader-options.js';
import { buildSafely, buildSafelyYielding, crashedBuild, publishInOrder } from './safe-build.js';
import type { BuildSubscriber, PublishedBuild, ReloadResult } from './subscribers.js';
import type { EnvoyVerdict } from '../xds/publish/envoy-verdict.js';
import {
  logNewlyPublic,
  logRejected,
  logVerdict,
  logWarnings,
  rejectedBuild,
  type DeltaStats,
} from './reload-log.js';

/** Counters and state of the reload loop, for logs, tests and (later) metrics. */
export interface ReloadStats {
  readonly reloads: number;
  readonly failures: number;
  readonly lastSuccess: boolean;
  readonly activeVersion: string | undefined;
  readonly lastProblems: readonly Problem[];
}

/**
 * The reload loop: watch -> parse -> translate -> compile -> publish each good build to the
 * subscribers (see `BuildSubscriber`), or keep the last good one. An invalid change is logged once
 * with every problem and its key path and reaches no subscriber (so never Envoy); the next valid
 * change goes live once the watcher reports it (a rename at once, an in-place write once the file
 * has stopped changing for `settleMs` and no process has it open for writing; see FileWatcher).
 *
 * With `envoyVerdict` (where this process serves xDS), a published build is confirmed by Envoy
 * before the reload counts: taken, it becomes the last taken build; NACKed, the
 * reload is logged with Envoy's error_detail and counted as failed, and the last taken build is
 * handed to every subscriber again, so the authorization state (and the snapshot) go back to the
 * version Envoy runs; superseded by a newer build, it is only logged. The next build is not held
 * up while one waits. A reload that makes a protected path public is logged at warn.
 *
 * Where builds run: with `worker` (every serving process: all-in-one, split services, sidecar),
 * `start` and `reloadInBackground` build in a worker thread (BuildWorker), so no ext_authz Check,
 * sign-in or ADS answer waits for a build; only the finished build crosses, as a delta applied in
 * chunks, and is published whole. `loadInitial` and `reload` build in this thread, synchronously
 * (tools and tests), as do all builds without `worker` (and with `afterCompile`, a function that
 * cannot cross to a worker).
 *
 * The config comes from the file at `configPath`, or, with `document`, from a config source that
 * pushes documents (the Kubernetes settings resource): `pushDocument` builds each new one through
 * the same loop (same worker, same make-before-break, same log, the last good build kept when it
 * fails), and `configPath` only names the source in logs and errors.
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
  private lastGood: PublishedBuild | undefined;
  /** The last build Envoy took (or that nothing could confirm): what a rejected one goes back to. */
  private lastTaken: PublishedBuild | undefined;
  /** The last good build made in this thread: what the next in-thread pass reuses. */
  private threadBase: GoodBuild | undefined;
  /** Where background builds run, when they run off this thread (see the class comment). */
  private readonly worker: BuildWorker | undefined;
  private readonly subscribers: BuildSubscriber[];
  /** The background reloads, one after another (see reloadInBackground). */
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  /**
   * Used where the config sets no shared_secret or cookie_secret and the caller passes none: one
   * pair for the loop's life, so keys stay across reloads.
   */
  private readonly generatedSecrets = { sharedSecret: randomBytes(32), cookieSecret: randomBytes(32) };
  /** The document the last pass built from, where a config source pushes them (see `pushDocument`). */
  private pushed: PushedDocument | undefined;

  constructor(private readonly options: ReloaderOptions) {
    this.subscribers = [...(options.subscribers ?? [])];
    this.pushed = options.document;
    this.worker =
      options.worker === undefined || options.afterCompile !== undefined
        ? undefined
        : new BuildWorker({
            ...(options.worker === true ? {} : options.worker),
            configPath: options.configPath,
            env: options.env,
            generatedSecrets: this.generatedSecrets,
          });
    this.watcher = new FileWatcher((changed) => void this.reloadInBackground(changed), {
      logger: options.logger,
      ...(options.settleMs === undefined ? {} : { settleMs: options.settleMs }),
    });
  }

  /**
   * Loads the config for the first time, in this thread; throws ValidationError when it is invalid
   * (nothing to keep). Tools and tests; a serving process uses `start`.
   */
  loadInitial(): PublishedBuild {
    const started = performance.now();
    return this.takeInitial(this.inThread(build(this.input())), started);
  }

  /**
   * `loadInitial` in the build worker (with `worker`; else in this thread, giving the event loop
   * turns between stages): rejects with a ValidationError when the config is invalid, or when the
   * worker failed (its reason as the problem).
   */
  async start(): Promise<PublishedBuild> {
    const started = performance.now();
    const built =
      this.worker === undefined
        ? this.inThread(await buildSafelyYielding(() => buildYielding(this.input()), this.filesKnown()))
        : (await this.inWorker()).result;
    return this.takeInitial(built, started);
  }

  /** Publishes the first build and starts watching its files; throws when it failed. */
  private takeInitial(built: ReloadResult, started: number): PublishedBuild {
    logWarnings(this.options.logger, built.warnings);
    const result = built.ok ? this.publish(built) : built;
    if (!result.ok) throw new ValidationError(result.problems, this.options.configPath);
    this.accept(result);
    this.lastTaken = result;
    this.watcher.watch(result.filesRead);
    this.options.onReload?.(result, (performance.now() - started) / 1000);
    return result;
  }

  /**
   * Re-runs the pipeline now, in one synchronous pass, and returns the result (tools and tests;
   * while serving, `reloadInBackground`). `read` holds bytes the watcher just read and compared
   * (absolute path -> bytes): the config file is parsed from them rather than read again.
   */
  reload(read?: ReadonlyMap<string, Buffer>): ReloadResult {
    const started = performance.now();
    return this.finish(
      this.inThread(buildSafely(() => build(this.input(read), this.threadBase), this.filesKnown())),
      started,
    ).result;
  }

  /**
   * `reload`, for changes noticed while serving (the file watcher, SIGHUP): in the build worker
   * (with `worker`), or else with the event loop given a turn between the pipeline's stages
   * (`buildYielding`), so Checks and ADS keep being answered while a large config builds. Reloads
   * run one at a time, in the order asked, each from the
   * build before it. After `close`, a reload still queued publishes nothing. The promise settles
   * once the reload's outcome is known: with `envoyVerdict`, after Envoy's verdict (a NACKed build
   * resolves as a failed one, stage `envoy`); later reloads do not wait for it.
   */
  reloadInBackground(read?: ReadonlyMap<string, Buffer>): Promise<ReloadResult | undefined> {
    return this.enqueue(read, undefined);
  }

  /**
   * `reloadInBackground` for a config source that pushes documents: builds `pushed` (after the
   * reloads queued before it) and settles with the outcome, whose problems the source maps back
   * to its own objects. Later reloads (SIGHUP) rebuild the last document pushed.
   */
  pushDocument(pushed: PushedDocument): Promise<ReloadResult | undefined> {
    return this.enqueue(undefined, pushed);
  }

  private enqueue(
    read: ReadonlyMap<string, Buffer> | undefined,
    pushed: PushedDocument | undefined,
  ): Promise<ReloadResult | undefined> {
    const next = this.queue.then(async () => {
      if (this.closed) return undefined;
      if (pushed !== undefined) this.pushed = pushed;
      const started = performance.now();
      if (this.worker !== undefined) {
        const done = await this.inWorker(read);
        return this.closed ? undefined : this.finish(done.result, started, done);
      }
      const built = await buildSafelyYielding(
        () => buildYielding(this.input(read), this.threadBase),
        this.filesKnown(),
      );
      return this.closed ? undefined : this.finish(this.inThread(built), started);
    });
    this.queue = next.catch(() => undefined);
    return next.then((done) => done?.outcome);
  }

  /**
   * Logs, publishes and records one finished pass (see `reload`): `result` is what was published,
   * `outcome` settles with the reload's outcome (see `reloadInBackground`).
   */
  private finish(
    built: ReloadResult,
    started: number,
    worker?: Pick<WorkerBuild, 'opened' | 'chunks' | 'longestApplyMs' | 'receiveMs'>,
  ): { readonly result: ReloadResult; readonly outcome: Promise<ReloadResult> } {
    logWarnings(this.options.logger, built.warnings);
    const installStarted = performance.now();
    const before = this.lastGood;
    const result = built.ok ? this.publish(built) : built;
    // Watch whatever the newest config references (a new CA file, say), even when it was rejected.
    this.watcher.watch([...new Set([...(this.lastGood?.filesRead ?? []), ...result.filesRead])]);
    if (!result.ok) {
      this.fail(result, started);
      return { result, outcome: Promise.resolve(result) };
    }
    this.accept(result);
    const opened: readonly NewlyPublic[] =
      worker?.opened ?? (before === undefined ? [] : newlyPublic(before.ir, result.ir));
    logNewlyPublic(this.options.logger, opened);
    const publishMs = Math.round((performance.now() - installStarted) * 10) / 10;
    const delta: DeltaStats | undefined =
      worker === undefined
        ? undefined
        : { chunks: worker.chunks, longestApplyMs: worker.longestApplyMs, receiveMs: worker.receiveMs };
    const changed = before?.snapshot.version !== result.snapshot.version;
    const verdict = this.options.envoyVerdict;
    // Envoy has something to confirm unless it already took this very snapshot.
    if (verdict === undefined || this.lastTaken?.snapshot.version === result.snapshot.version) {
      this.lastTaken = result;
      logVerdict(this.options.logger, result, { changed, publishMs, verdict: undefined, delta });
      this.options.onReload?.(result, (performance.now() - started) / 1000);
      return { result, outcome: Promise.resolve(result) };
    }
    const outcome = verdict(result.snapshot).then((said) =>
      this.judged(result, said, started, { publishMs, delta }),
    );
    return { result, outcome };
  }

  /** Records Envoy's verdict on a published build (see the class comment); returns the outcome. */
  private judged(
    result: PublishedBuild,
    verdict: EnvoyVerdict,
    started: number,
    timing: { readonly publishMs: number; readonly delta: DeltaStats | undefined },
  ): ReloadResult {
    if (this.closed) return result;
    if (verdict.kind !== 'rejected') {
      if (verdict.kind !== 'superseded') this.lastTaken = result;
      logVerdict(this.options.logger, result, { changed: true, ...timing, verdict });
      this.options.onReload?.(result, (performance.now() - started) / 1000);
      return result;
    }
    const failed = rejectedBuild(result, verdict);
    const taken = this.lastTaken;
    // Only the latest build is rolled back (a newer one already replaced this one everywhere).
    if (this.lastGood === result && taken !== undefined) {
      this.lastGood = taken;
      const restored = this.publish(taken);
      if (!restored.ok) this.logFailure(restored);
    }
    this.stats = { ...this.stats, activeVersion: this.lastGood?.snapshot.version };
    this.fail(failed, started);
    return failed;
  }

  /** Counts, logs and reports a failed pass. */
  private fail(result: FailedBuild, started: number): void {
    this.stats = {
      ...this.stats,
      failures: this.stats.failures + 1,
      lastSuccess: false,
      lastProblems: result.problems,
    };
    this.logFailure(result);
    this.options.onReload?.(result, (performance.now() - started) / 1000);
  }

  private logFailure(result: FailedBuild): void {
    logRejected(this.options.logger, this.options.configPath, result, this.stats.activeVersion);
  }

  /**
   * Adds `subscriber` after the existing ones and hands it the last good build at once, so a part
   * started once the first config is known (the services it names) begins from that config.
   * Throws when it refuses that build (nothing else is affected: the others already have it).
   */
  subscribe(subscriber: BuildSubscriber): void {
    if (this.lastGood !== undefined) subscriber.publish(this.lastGood);
    this.subscribers.push(subscriber);
  }

  current(): ReloadStats {
    return this.stats;
  }

  lastGoodBuild(): PublishedBuild | undefined {
    return this.lastGood;
  }

  /** Stops watching and stops the build worker (nothing of the loop keeps the process alive). */
  close(): void {
    this.closed = true;
    this.watcher.close();
    void this.worker?.close();
  }

  /** One pass in the build worker; a worker that failed becomes a failed build (see `crashedBuild`). */
  private async inWorker(
    read?: ReadonlyMap<string, Buffer>,
  ): Promise<Pick<WorkerBuild, 'result' | 'opened' | 'chunks' | 'longestApplyMs' | 'receiveMs'>> {
    const worker = this.worker as BuildWorker;
    try {
      const externals = this.externals();
      return await worker.build({
        externals: {
          systemCaFile: externals.systemCaFile,
          ...(externals.pinned === undefined ? {} : { pinned: externals.pinned }),
        },
        ...(read === undefined ? {} : { read }),
        ...(this.pushed === undefined ? {} : { pushed: this.pushed }),
      });
    } catch (err) {
      return {
        result: crashedBuild(err, this.filesKnown()),
        opened: [],
        chunks: 0,
        longestApplyMs: 0,
        receiveMs: 0,
      };
    }
  }

  /** Keeps a good in-thread build as the next in-thread pass's base; returns it as it is. */
  private inThread(built: BuildResult): BuildResult {
    if (built.ok) this.threadBase = built;
    return built;
  }

  /** Translate's inputs from outside the file for this pass (the caller's). */
  private externals(): TranslateExternals {
    return typeof this.options.translate === 'function' ? this.options.translate() : this.options.translate;
  }

  /** The pipeline's input: the config, the environment, translate's options, and bytes already read. */
  private input(read?: ReadonlyMap<string, Buffer>): BuildInput {
    const { configPath, env, translate, afterCompile } = this.options;
    return {
      configPath,
      env,
      translate: () => ({
        generatedSecrets: this.generatedSecrets,
        ...(typeof translate === 'function' ? translate() : translate),
      }),
      ...(read === undefined ? {} : { read }),
      ...(this.pushed === undefined ? {} : { pushed: this.pushed }),
      ...(afterCompile === undefined ? {} : { afterCompile }),
    };
  }

  /** The files a failed pass names (the last good build's, else the config file; none when pushed). */
  private filesKnown(): readonly string[] {
    return this.lastGood?.filesRead ?? (this.pushed === undefined ? [this.options.configPath] : []);
  }

  /** Hands `result` to every subscriber in order (see `publishInOrder`). */
  private publish(result: PublishedBuild): ReloadResult {
    return publishInOrder(this.subscribers, result);
  }

  private accept(result: PublishedBuild): void {
    this.lastGood = result;
    const { reloads, failures } = this.stats;
    this.stats = {
      reloads: reloads + 1,
      failures,
      lastSuccess: true,
      activeVersion: result.snapshot.version,
      lastProblems: [],
    };
  }
}

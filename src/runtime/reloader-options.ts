import type { Logger } from '../shared/logger.js';
import type { CompiledResources } from '../proto/compiled.js';
import type { Snapshot } from '../xds/snapshot/types.js';
import type { EnvoyVerdict } from '../xds/publish/envoy-verdict.js';
import type { PushedDocument, TranslateExternals } from '../translate/from-file.js';
import type { BuildWorkerOptions } from './build-worker.js';
import type { BuildSubscriber, ReloadResult } from './subscribers.js';

/** How a Reloader is set up: where the config comes from, who gets each build, and test seams. */
export interface ReloaderOptions {
  /** The config file; with `document`, the name of the source that pushes documents. */
  readonly configPath: string;
  /** The first document of a config source that pushes them (see the class comment); no file then. */
  readonly document?: PushedDocument;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Translate's inputs from outside the file, or how to get them for each pass. */
  readonly translate: TranslateExternals | (() => TranslateExternals);
  /**
   * Who receives each good build, in this order (authorization state before the xDS snapshot);
   * more can join with `subscribe` once the first config says which services run.
   */
  readonly subscribers?: readonly BuildSubscriber[];
  readonly logger: Logger;
  /** How long an in-place write must stay unchanged before it is loaded (FileWatcher's default: 1 s). */
  readonly settleMs?: number;
  /**
   * Called after each load, good or not, with how long it took from reading to publishing (and,
   * with `envoyVerdict`, to Envoy's verdict), in seconds; a build Envoy NACKed is a failed one.
   */
  readonly onReload?: (result: ReloadResult, seconds: number) => void;
  /** Envoy's verdict on a published build's snapshot (see EnvoyVerdicts); none: taken at once. */
  readonly envoyVerdict?: (snapshot: Snapshot) => Promise<EnvoyVerdict>;
  /** Test seam: rewrites the compiled resources of every build (to make one Envoy rejects). */
  readonly afterCompile?: (compiled: CompiledResources) => CompiledResources;
  /**
   * Build in a worker thread (see the class comment), with these test seams if any; ignored
   * with `afterCompile`.
   */
  readonly worker?:
    | true
    | Pick<BuildWorkerOptions, 'entry' | 'resourceLimits' | 'chunkLimits' | 'afterCompileModule'>;
}

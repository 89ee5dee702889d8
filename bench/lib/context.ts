import type { Product } from './product.js';
import type { ProcessGroups } from './processes.js';

/** What every suite gets from the run (`bench/run.ts`). */
export interface Context {
  /** The checkout being measured. */
  readonly target: Product;
  /** Fewer runs and shorter loads: a smoke test, not numbers to quote. */
  readonly quick: boolean;
  /** Starts the measured processes and kills what is left if the run is interrupted. */
  readonly groups: ProcessGroups;
  /** A scratch directory of this run (configs, logs), removed at the end. */
  readonly workDir: string;
  /** A progress line on stderr. */
  progress(message: string): void;
}

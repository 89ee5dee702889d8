/** Summary statistics of one measured quantity over several runs. */
export interface Summary {
  readonly runs: readonly number[];
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/**
 * Median, min and max of `runs`. Benchmarks quote medians: on a shared two-core machine a single
 * slow run (another process, a GC pause) says little, and the median of five or more does not move
 * with one outlier.
 */
export function summarize(runs: readonly number[]): Summary {
  if (runs.length === 0) throw new Error('summarize needs at least one run');
  const sorted = [...runs].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  const median =
    sorted.length % 2 === 1
      ? (sorted[middle] as number)
      : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return {
    runs: runs.map(round),
    median: round(median),
    min: round(sorted[0] as number),
    max: round(sorted[sorted.length - 1] as number),
  };
}

/** Rounds to 0.01 so result files stay readable. */
export function round(value: number): number {
  return Math.round(value * 100) / 100;
}

/** Bytes to MiB, rounded. */
export function mib(bytes: number): number {
  return round(bytes / (1024 * 1024));
}

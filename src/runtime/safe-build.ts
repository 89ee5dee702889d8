import { errorMessage } from '../shared/errors.js';
import type { BuildResult, FailedBuild } from './build-pipeline.js';
import type { BuildSubscriber, PublishedBuild, ReloadResult } from './subscribers.js';

/**
 * The failed build standing for a pass that threw (or a build worker that failed): stage `parse`,
 * the error's message, and `filesRead` (what the last good build read, so the watcher keeps them).
 */
export function crashedBuild(err: unknown, filesRead: readonly string[]): FailedBuild {
  return {
    ok: false,
    stage: 'parse',
    problems: [{ path: '', message: `the config could not be processed: ${errorMessage(err)}` }],
    warnings: [],
    filesRead,
  };
}

/**
 * One pass of the pipeline that cannot throw: the stages report problems rather than throw, but a
 * bug that throws anyway (a stack overflow on input no limit caught, say) becomes a failed build
 * here, so a reload started from the watcher's timer can never end the process, and the last good
 * config keeps serving.
 */
export function buildSafely(pass: () => BuildResult, filesRead: readonly string[]): BuildResult {
  try {
    return pass();
  } catch (err) {
    return crashedBuild(err, filesRead);
  }
}

/** `buildSafely` for a pass that yields (`buildYielding`). */
export async function buildSafelyYielding(
  pass: () => Promise<BuildResult>,
  filesRead: readonly string[],
): Promise<BuildResult> {
  try {
    return await pass();
  } catch (err) {
    return crashedBuild(err, filesRead);
  }
}

/**
 * Hands `result` to each subscriber in order. One that throws stops the build there and turns it
 * into a failed one (stage `publish`), so the subscribers after it (Envoy's snapshot last) never
 * see a build an earlier one could not take.
 */
export function publishInOrder(
  subscribers: readonly BuildSubscriber[],
  result: PublishedBuild,
): ReloadResult {
  for (const subscriber of subscribers) {
    try {
      subscriber.publish(result);
    } catch (err) {
      return {
        ok: false,
        stage: 'publish',
        problems: [
          { path: '', message: `${subscriber.name} could not take the config: ${errorMessage(err)}` },
        ],
        warnings: result.warnings,
        filesRead: result.filesRead,
      };
    }
  }
  return result;
}

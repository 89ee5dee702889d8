import type { IR } from '../ir/types.js';
import type { Snapshot } from '../xds/snapshot/types.js';
import type { FailedBuild, GoodBuild } from './build-pipeline.js';

/**
 * What the serving side gets of a good build: the IR, key ring, snapshot, warnings, files read and
 * timings (and whatever else the pipeline reports beside them), without the pipeline's own reuse
 * (`memo`), which stays where the build ran: in the build worker while serving
 * (runtime/build-worker.ts), where a reload is assembled from a delta and never holds those.
 */
export type PublishedBuild = Omit<GoodBuild, 'memo'> & {
  /**
   * What this build changed relative to the build published just before it (the delta's base), when
   * known; undefined (the first build, or a build made in-thread): unknown, compare everything.
   */
  readonly changes?: BuildChanges;
};

/**
 * The names of the IR virtual hosts and clusters a build changed, added or removed relative to
 * the build received before it, whose IR is `base`: a subscriber whose last IR is that very object
 * may look at these only (every other item is the same object as before); any other (a build
 * published again after a NACK, see `Reloader`) compares everything. The resources' changes are
 * on the snapshot (`Snapshot.changedFrom`), where the ADS server, which knows no builds, reads them.
 */
export interface BuildChanges {
  readonly base: IR;
  readonly virtualHosts: ReadonlySet<string>;
  readonly clusters: ReadonlySet<string>;
}

/** The outcome of one load as the reload loop reports it: a published build, or why there is none. */
export type ReloadResult = PublishedBuild | FailedBuild;

/**
 * A consumer of accepted builds: the xDS snapshot store, the authorization state, and later the
 * authenticate service. The reload loop publishes each good build to its subscribers in the
 * order they were given, so the runtime is wired to none of them in particular, and each service
 * a process runs (`services`) adds only its own subscriber. Order matters where one consumer must
 * see a build before another: the authorization state takes a config's policies before Envoy can
 * route by it, so it comes before the snapshot store. `publish` throwing rejects the build: the
 * subscribers after it do not see it, and the reload is reported as failed. A subscriber may be
 * handed an older build again: when Envoy NACKs a build, the last build it took is published to
 * every subscriber once more (see `Reloader`), so `publish` must take any build, not only newer ones.
 */
export interface BuildSubscriber {
  /** Names the subscriber in logs and errors. */
  readonly name: string;
  publish(build: PublishedBuild): void;
}

/**
 * The subscriber that hands each build's xDS snapshot to `target`, and so to every Envoy: the
 * snapshot store itself, or make-before-break (xds/publish) in front of it.
 */
export function snapshotSubscriber(target: { publish(snapshot: Snapshot): void }): BuildSubscriber {
  return { name: 'xds', publish: (build) => target.publish(build.snapshot) };
}

import { TYPED_EXTENSION_CONFIG_TYPE } from '../../proto/type-urls.js';
import { snapshotOf } from './build-snapshot.js';
import type { EncodedResource, Snapshot, SnapshotChanges, SnapshotSource } from './types.js';

/** The resource type whose resources come from the overlay, not from builds (see `overlay`). */
export const OVERLAY_TYPE = TYPED_EXTENSION_CONFIG_TYPE;

/**
 * Holds the current snapshot and tells subscribers about new ones. Publishing swaps one reference,
 * so a reader sees either the old or the new snapshot, never a mix. Every node gets the same
 * snapshot today; `current(nodeId)` keeps the door open for per-node views.
 *
 * Besides the builds' snapshots it holds an overlay: filter configs served on their own (ECDS,
 * `OVERLAY_TYPE`) whose content changes between builds and must reach every Envoy at once (the
 * fast path's revocations). Builds leave that type empty; every snapshot served carries the
 * overlay's resources, so a build never undoes an overlay and an overlay never waits for a build.
 */
export class SnapshotStore implements SnapshotSource {
  /** The last build's snapshot, as published. */
  private built: Snapshot | undefined;
  private overlaid: ReadonlyMap<string, EncodedResource> = new Map();
  /** `built` with the overlay: what is served. */
  private snapshot: Snapshot | undefined;
  private readonly listeners = new Set<(snapshot: Snapshot) => void>();

  current(_nodeId?: string): Snapshot | undefined {
    return this.snapshot;
  }

  subscribe(listener: (snapshot: Snapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Publishes a build's `snapshot` (with the overlay) unless what is served stays the same; returns
   * whether it changed anything.
   */
  publish(snapshot: Snapshot): boolean {
    this.built = snapshot;
    return this.serve();
  }

  /**
   * Replaces the overlay's resources (by name; an empty map removes them all) in what is served
   * now and in every build published later. Nothing is served before the first build. Returns
   * whether what is served changed.
   */
  overlay(resources: ReadonlyMap<string, EncodedResource>): boolean {
    this.overlaid = new Map([...resources].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return this.serve();
  }

  private serve(): boolean {
    const built = this.built;
    if (built === undefined) return false;
    const next =
      this.overlaid.size === 0
        ? built
        : withChanges(
            snapshotOf(
              { ...built.resources, [OVERLAY_TYPE]: this.overlaid },
              withoutType(built.typeVersions),
            ),
            built.changedFrom,
          );
    if (this.snapshot?.version === next.version) return false;
    this.snapshot = next;
    for (const listener of this.listeners) listener(next);
    return true;
  }
}

/** `versions` without the overlay type's, so `snapshotOf` computes it from the overlay. */
function withoutType(versions: Snapshot['typeVersions']): Partial<Snapshot['typeVersions']> {
  const { [OVERLAY_TYPE]: _overlay, ...rest } = versions;
  return rest;
}

/**
 * `snapshot` with what the build changed in the types the overlay leaves alone (its own type's
 * content is the overlay's, so nothing is known of it).
 */
function withChanges(snapshot: Snapshot, changes: SnapshotChanges | undefined): Snapshot {
  if (changes === undefined) return snapshot;
  const { [OVERLAY_TYPE]: _version, ...typeVersions } = changes.typeVersions;
  const { [OVERLAY_TYPE]: _names, ...names } = changes.names;
  return { ...snapshot, changedFrom: { typeVersions, names } };
}

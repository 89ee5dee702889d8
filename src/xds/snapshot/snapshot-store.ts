import type { Snapshot, SnapshotSource } from './types.js';

/**
 * Holds the current snapshot and tells subscribers about new ones. Publishing swaps one reference,
 * so a reader sees either the old or the new snapshot, never a mix. Every node gets the same
 * snapshot today; `current(nodeId)` keeps the door open for per-node views.
 */
export class SnapshotStore implements SnapshotSource {
  private snapshot: Snapshot | undefined;
  private readonly listeners = new Set<(snapshot: Snapshot) => void>();

  current(_nodeId?: string): Snapshot | undefined {
    return this.snapshot;
  }

  subscribe(listener: (snapshot: Snapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Publishes `snapshot` unless it equals the current one; returns whether it changed anything. */
  publish(snapshot: Snapshot): boolean {
    if (this.snapshot?.version === snapshot.version) return false;
    this.snapshot = snapshot;
    for (const listener of this.listeners) listener(snapshot);
    return true;
  }
}

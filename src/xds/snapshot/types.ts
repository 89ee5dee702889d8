import type { ResourceType } from '../../proto/type-urls.js';

/**
 * One encoded xDS resource: its name, its wire bytes, and its version, a content hash of those
 * bytes, so an unchanged resource keeps its version across reloads and restarts and only changed
 * resources are pushed.
 */
export interface EncodedResource {
  readonly name: string;
  readonly version: string;
  readonly bytes: Uint8Array;
}

/**
 * An immutable, consistent set of resources for every type Portcullis serves, each type's map in
 * name order. `version` is a hash over the type versions; `typeVersions` are hashes over each
 * type's (name, version) pairs, used as SotW `version_info` and delta `system_version_info`. A
 * snapshot is only published after its consistency check passed.
 */
export interface Snapshot {
  readonly version: string;
  readonly typeVersions: Readonly<Record<ResourceType, string>>;
  readonly resources: Readonly<Record<ResourceType, ReadonlyMap<string, EncodedResource>>>;
  /**
   * What this snapshot changed relative to an earlier one, when whoever made it knows (a build
   * assembled from a delta, runtime/apply-delta.ts); undefined: unknown, compare everything.
   */
  readonly changedFrom?: SnapshotChanges;
}

/**
 * Per type: a type version of an earlier snapshot (`typeVersions`) and every name whose resource
 * differs between that type's content and this snapshot's (changed, added or removed; sorted by
 * name). A type version is a hash over the type's (name, version) pairs, so whatever holds a type
 * at that version holds the same content: a reader whose last view of a type has that version
 * needs to look at these names only (the ADS streams' plans, xds/server/delta-state.ts). A type
 * missing from either record is unknown (compare everything).
 */
export interface SnapshotChanges {
  readonly typeVersions: Readonly<Partial<Record<ResourceType, string>>>;
  readonly names: Readonly<Partial<Record<ResourceType, readonly string[]>>>;
}

/**
 * Where the ADS server gets snapshots from. `current()` is undefined until a validated config has
 * been loaded: the server must not answer LDS/CDS before that (security-threats.md 2.1).
 * `subscribe` calls the listener on every newly published snapshot and returns an unsubscribe.
 * `nodeId` lets a future per-node store hand different Envoys different snapshots.
 */
export interface SnapshotSource {
  current(nodeId: string): Snapshot | undefined;
  subscribe(listener: (snapshot: Snapshot) => void): () => void;
}

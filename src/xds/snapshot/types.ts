import type { ResourceType } from '../codec/type-urls.js';
import type { SnapshotEntry } from './snapshot-entry.js';

/**
 * One encoded xDS resource, read through `resourceBytes` and `resourceVersion` (snapshot-entry.ts).
 * Its version is a content hash of its bytes, so an unchanged resource keeps its version across
 * reloads and restarts, and only changed resources are pushed. A snapshot holds `SnapshotEntry`
 * records; a `HeldResource` is the same thing spelled out (tests, tools).
 */
export type EncodedResource = SnapshotEntry | HeldResource;

/** An encoded resource that holds its bytes and version. */
export interface HeldResource {
  readonly name: string;
  readonly version: string;
  readonly bytes: Uint8Array;
}

/**
 * An immutable, consistent set of resources for every type Portcullis serves. `version` is a hash
 * over all resource versions; `typeVersions` are per-type hashes used as SotW `version_info`.
 * A snapshot is only published after its consistency check passed.
 */
export interface Snapshot {
  readonly version: string;
  readonly typeVersions: Readonly<Record<ResourceType, string>>;
  readonly resources: Readonly<Record<ResourceType, ReadonlyMap<string, EncodedResource>>>;
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

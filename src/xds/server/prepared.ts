import { resourceBytes, resourceVersion } from '../snapshot/snapshot-entry.js';
import { CLUSTER_TYPE, LISTENER_TYPE, SCOPED_ROUTE_CONFIGURATION_TYPE, typeUrl } from '../codec/type-urls.js';
import type { ResourceType } from '../codec/type-urls.js';
import type { EncodedResource, Snapshot } from '../snapshot/types.js';
import { isSortedByName, SortedResourceMap } from '../snapshot/sorted-by-name.js';
import { deltaResourceSize } from './chunking.js';
import { encodeSotwResponse } from './messages.js';
import type { AnyObject, DeltaResourceObject } from './messages.js';

/**
 * Per-snapshot work shared by every stream. A snapshot is immutable, so the encoded full-set SotW
 * body (LDS/CDS/SRDS) is computed once per snapshot and type, on first use, and cached in a
 * WeakMap keyed by the snapshot: with 10,000 resources and many Envoys, a push costs each stream a
 * diff and a write, never a re-encode of resources.
 */

/**
 * One resource ready to be placed in any response: the snapshot's own encoded resource, which a
 * build reuses (same object) while the resource is unchanged, so streams diff snapshots by
 * identity. Its `Any` and delta `Resource` wrappers are made when a response is written
 * (`anyOf`, `deltaResourceOf`): kept for every resource, they were three objects per resource for
 * the life of the snapshot.
 */
export type PreparedResource = EncodedResource;

/** `resource` as `Any` for SotW `resources`. */
export function anyOf(typeUrl: string, resource: PreparedResource): AnyObject {
  return { type_url: typeUrl, value: resourceBytes(resource) };
}

/** `resource` as `envoy.service.discovery.v3.Resource` for delta `resources`. */
export function deltaResourceOf(typeUrl: string, resource: PreparedResource): DeltaResourceObject {
  return { name: resource.name, version: resourceVersion(resource), resource: anyOf(typeUrl, resource) };
}

/** Bytes `deltaResourceOf(typeUrl, resource)` adds to a `DeltaDiscoveryResponse` (see chunking.ts). */
export function deltaSizeOf(typeUrl: string, resource: PreparedResource): number {
  return deltaResourceSize(resource.name, resourceVersion(resource), typeUrl, resourceBytes(resource).length);
}

/** All resources of one type in one snapshot, in snapshot order, plus the type's version. */
export interface PreparedType {
  readonly type: ResourceType;
  readonly typeUrl: string;
  /** The snapshot's per-type version: SotW `version_info`, delta `system_version_info`. */
  readonly version: string;
  readonly list: readonly PreparedResource[];
  /** `list` is in strictly increasing name order (what lets streams diff two lists in one merge). */
  readonly sorted: boolean;
  readonly byName: ReadonlyMap<string, PreparedResource>;
  /** The encoded SotW response holding every resource of the type, without a nonce (see `withNonce`). */
  fullSotwBody(): Uint8Array;
}

/** A snapshot with lazily prepared types. */
export interface PreparedSnapshot {
  readonly snapshot: Snapshot;
  type(type: ResourceType): PreparedType;
}

const cache = new WeakMap<Snapshot, PreparedSnapshot>();
/**
 * Prepared types by the snapshot's resource map: a build that leaves a type unchanged hands the
 * next snapshot the same map, so streams see the same prepared type and skip it at once.
 */
const preparedByMap = new WeakMap<ReadonlyMap<string, EncodedResource>, PreparedType>();

/** Returns the prepared view of `snapshot`, creating it once per snapshot object. */
export function prepare(snapshot: Snapshot): PreparedSnapshot {
  let prepared = cache.get(snapshot);
  if (prepared === undefined) {
    prepared = createPrepared(snapshot);
    cache.set(snapshot, prepared);
  }
  return prepared;
}

function createPrepared(snapshot: Snapshot): PreparedSnapshot {
  const types = new Map<ResourceType, PreparedType>();
  return {
    snapshot,
    type(type) {
      let prepared = types.get(type);
      if (prepared === undefined) {
        const byName = snapshot.resources[type];
        prepared = preparedByMap.get(byName);
        if (
          prepared === undefined ||
          prepared.type !== type ||
          prepared.version !== snapshot.typeVersions[type]
        ) {
          prepared = prepareType(snapshot, type);
          preparedByMap.set(byName, prepared);
        }
        types.set(type, prepared);
      }
      return prepared;
    },
  };
}

function prepareType(snapshot: Snapshot, type: ResourceType): PreparedType {
  const url = typeUrl(type);
  const version = snapshot.typeVersions[type];
  const byName = snapshot.resources[type];
  const isSorted = byName instanceof SortedResourceMap;
  const list = isSorted ? byName.sortedList() : [...byName.values()];
  let body: Uint8Array | undefined;
  return {
    type,
    typeUrl: url,
    version,
    list,
    sorted: isSorted || isSortedByName(list),
    byName,
    fullSotwBody() {
      body ??= encodeSotwResponse({
        version_info: version,
        type_url: url,
        resources: list.map((r) => anyOf(url, r)),
      });
      return body;
    },
  };
}

/** Listener, Cluster and ScopedRouteConfiguration: SotW responses carry the complete set and
 * wildcard subscriptions exist (xDS protocol, "How the client specifies what resources to return"
 * and "Deleting Resources"; Envoy subscribes to scopes by wildcard). */
export function isFullSetType(type: ResourceType): boolean {
  return type === CLUSTER_TYPE || type === LISTENER_TYPE || type === SCOPED_ROUTE_CONFIGURATION_TYPE;
}

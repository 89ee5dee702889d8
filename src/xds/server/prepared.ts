import {
  RESOURCE_TYPES,
  CLUSTER_TYPE,
  LISTENER_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
  typeUrl,
} from '../../proto/type-urls.js';
import type { ResourceType } from '../../proto/type-urls.js';
import type { EncodedResource, Snapshot } from '../snapshot/types.js';
import { deltaResourceSize } from './chunking.js';
import { encodeSotwResponse } from './messages.js';
import type { AnyObject, DeltaResourceObject } from './messages.js';

/**
 * A snapshot as the streams read it: per type, the resources in name order, by name, and the
 * encoded full-set SotW body (LDS/CDS/SRDS), made once on first use. The AdsServer prepares each
 * published snapshot once and hands that one view to every stream, so with many Envoys a push
 * costs each stream a diff and a write, never a re-encode of resources.
 */

/** One resource ready to be placed in any response: the snapshot's own encoded resource. */
export type PreparedResource = EncodedResource;

/** `resource` as `Any` for SotW `resources`. */
export function anyOf(typeUrl: string, resource: PreparedResource): AnyObject {
  return { type_url: typeUrl, value: resource.bytes };
}

/** `resource` as `envoy.service.discovery.v3.Resource` for delta `resources`. */
export function deltaResourceOf(typeUrl: string, resource: PreparedResource): DeltaResourceObject {
  return { name: resource.name, version: resource.version, resource: anyOf(typeUrl, resource) };
}

/** Bytes `deltaResourceOf(typeUrl, resource)` adds to a `DeltaDiscoveryResponse` (see chunking.ts). */
export function deltaSizeOf(typeUrl: string, resource: PreparedResource): number {
  return deltaResourceSize(resource.name, resource.version, typeUrl, resource.bytes.length);
}

/** All resources of one type in one snapshot, in name order, plus the type's version. */
export interface PreparedType {
  readonly type: ResourceType;
  readonly typeUrl: string;
  /** The snapshot's per-type version: SotW `version_info`, delta `system_version_info`. */
  readonly version: string;
  /** Sorted by strictly increasing name, so streams can diff two lists in one merge. */
  readonly list: readonly PreparedResource[];
  readonly byName: ReadonlyMap<string, PreparedResource>;
  /** The encoded SotW response holding every resource of the type, without a nonce (see `withNonce`). */
  fullSotwBody(): Uint8Array;
  /**
   * When the snapshot says (`Snapshot.changedFrom`): the type version of an earlier content of this
   * type and every name whose resource differs from it, sorted. A plan whose last view of the type
   * has version `from` needs to look at `names` only.
   */
  readonly changes?: { readonly from: string; readonly names: readonly string[] };
}

/** A snapshot with its types prepared on first use. */
export interface PreparedSnapshot {
  readonly snapshot: Snapshot;
  type(type: ResourceType): PreparedType;
  /** The type if it was prepared already (nothing is prepared by asking). */
  prepared(type: ResourceType): PreparedType | undefined;
}

/**
 * The prepared view of `snapshot`: a new object whose types are prepared on first use and then
 * kept with it. Its owner (the AdsServer) keeps the one view of its current snapshot and passes
 * it as `previous` for the next: a type whose resources are the very map `previous` was made
 * from, at the same version (a build that left the type alone), takes `previous`'s prepared type
 * as it is (list, full SotW body), so a snapshot costs only the types it changed.
 */
export function prepare(snapshot: Snapshot, previous?: PreparedSnapshot): PreparedSnapshot {
  const types = new Map<ResourceType, PreparedType>();
  // Taken now, not looked up later: the view must not hold on to the one before it.
  const before = previous?.snapshot;
  for (const type of RESOURCE_TYPES) {
    const kept = previous?.prepared(type);
    if (
      kept !== undefined &&
      before?.resources[type] === snapshot.resources[type] &&
      before.typeVersions[type] === snapshot.typeVersions[type]
    )
      types.set(type, kept);
  }
  return {
    snapshot,
    type(type) {
      let prepared = types.get(type);
      if (prepared === undefined) {
        prepared = prepareType(snapshot, type);
        types.set(type, prepared);
      }
      return prepared;
    },
    prepared: (type) => types.get(type),
  };
}

function prepareType(snapshot: Snapshot, type: ResourceType): PreparedType {
  const url = typeUrl(type);
  const version = snapshot.typeVersions[type];
  const byName = snapshot.resources[type];
  const list = [...byName.values()];
  if (!isSortedByName(list)) list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let body: Uint8Array | undefined;
  const from = snapshot.changedFrom?.typeVersions[type];
  const names = snapshot.changedFrom?.names[type];
  return {
    ...(from === undefined || names === undefined ? {} : { changes: { from, names } }),
    type,
    typeUrl: url,
    version,
    list,
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

/** True when every name is greater than the one before it. */
function isSortedByName(items: readonly { readonly name: string }[]): boolean {
  for (let i = 1; i < items.length; i++) {
    if (!((items[i - 1] as { name: string }).name < (items[i] as { name: string }).name)) return false;
  }
  return true;
}

/** Listener, Cluster and ScopedRouteConfiguration: SotW responses carry the complete set and
 * wildcard subscriptions exist (xDS protocol, "How the client specifies what resources to return"
 * and "Deleting Resources"; Envoy subscribes to scopes by wildcard). */
export function isFullSetType(type: ResourceType): boolean {
  return type === CLUSTER_TYPE || type === LISTENER_TYPE || type === SCOPED_ROUTE_CONFIGURATION_TYPE;
}

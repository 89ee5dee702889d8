import { CLUSTER_TYPE, LISTENER_TYPE, SCOPED_ROUTE_CONFIGURATION_TYPE, typeUrl } from '../codec/type-urls.js';
import type { ResourceType } from '../codec/type-urls.js';
import type { Snapshot } from '../snapshot/types.js';
import { deltaResourceSize } from './chunking.js';
import { encodeSotwResponse } from './messages.js';
import type { AnyObject, DeltaResourceObject } from './messages.js';

/**
 * Per-snapshot work shared by every stream. A snapshot is immutable, so the `Any` wrappers, the
 * delta `Resource` objects with their wire sizes, and the encoded full-set SotW body (LDS/CDS) are
 * computed once per snapshot and type, on first use, and cached in a WeakMap keyed by the snapshot:
 * with 10,000 resources and many Envoys, a push costs each stream a diff and a write, never a
 * re-encode of resources.
 */

/** One resource ready to be placed in any response. */
export interface PreparedResource {
  readonly name: string;
  readonly version: string;
  /** The resource as `Any` for SotW `resources`. */
  readonly any: AnyObject;
  /** The resource as `envoy.service.discovery.v3.Resource` for delta `resources`. */
  readonly delta: DeltaResourceObject;
  /** Bytes `delta` adds to a `DeltaDiscoveryResponse` (see chunking.ts). */
  readonly deltaSize: number;
}

/** All resources of one type in one snapshot, in snapshot order, plus the type's version. */
export interface PreparedType {
  readonly type: ResourceType;
  readonly typeUrl: string;
  /** The snapshot's per-type version: SotW `version_info`, delta `system_version_info`. */
  readonly version: string;
  readonly list: readonly PreparedResource[];
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
 * Prepared resources by their encoded bytes: a snapshot build reuses the bytes of unchanged
 * resources, so their wrappers are made once, not once per snapshot.
 */
const preparedByBytes = new WeakMap<Uint8Array, PreparedResource>();

/** The list last prepared per type: the next snapshot's is walked beside it. */
const lastPrepared = new Map<ResourceType, readonly PreparedResource[]>();

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
        prepared = prepareType(snapshot, type);
        types.set(type, prepared);
      }
      return prepared;
    },
  };
}

function prepareType(snapshot: Snapshot, type: ResourceType): PreparedType {
  const url = typeUrl(type);
  const version = snapshot.typeVersions[type];
  const list: PreparedResource[] = [];
  // Walk beside the last list prepared for this type: an unchanged resource has the same name and
  // the very same bytes object, found without a lookup by object (see build-snapshot.ts).
  const before = lastPrepared.get(type) ?? [];
  let j = 0;
  for (const encoded of snapshot.resources[type].values()) {
    const name = encoded.name;
    while (j < before.length && (before[j] as PreparedResource).name < name) j++;
    const old = before[j];
    let resource: PreparedResource | undefined;
    if (old !== undefined && old.name === name && old.any.value === encoded.bytes) {
      resource = old;
      j++;
    } else {
      resource = preparedByBytes.get(encoded.bytes);
      if (resource === undefined || resource.name !== name || resource.any.type_url !== url) {
        const any: AnyObject = { type_url: url, value: encoded.bytes };
        resource = {
          name,
          version: encoded.version,
          any,
          delta: { name, version: encoded.version, resource: any },
          deltaSize: deltaResourceSize(name, encoded.version, url, encoded.bytes.length),
        };
        preparedByBytes.set(encoded.bytes, resource);
      }
    }
    list.push(resource);
  }
  lastPrepared.set(type, list);
  let body: Uint8Array | undefined;
  // Built on first use: a delta stream that only diffs against its previous snapshot never needs it.
  let byName: Map<string, PreparedResource> | undefined;
  return {
    type,
    typeUrl: url,
    version,
    list,
    get byName() {
      byName ??= new Map(list.map((resource) => [resource.name, resource]));
      return byName;
    },
    fullSotwBody() {
      body ??= encodeSotwResponse({
        version_info: version,
        type_url: url,
        resources: list.map((r) => r.any),
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

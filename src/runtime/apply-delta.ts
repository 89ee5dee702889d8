import type { IR, IRCluster, IRVirtualHost } from '../ir/types.js';
import { fewChanges } from '../shared/few-changes.js';
import { buildKeyRing } from '../keys/key-ring.js';
import { RESOURCE_TYPES, type ResourceType } from '../proto/type-urls.js';
import type { EncodedResource, Snapshot, SnapshotChanges } from '../xds/snapshot/types.js';
import type { DeltaChunk, DeltaHeader, ItemsPatch } from './build-delta.js';
import { keySecretsOf } from './plain-secrets.js';
import type { BuildChanges, PublishedBuild } from './subscribers.js';

/** The build the main thread last received from the worker: the base the next delta applies to. */
export interface ReceivedBuild {
  readonly seq: number;
  readonly build: PublishedBuild;
}

/** One collection's changes, gathered from every chunk of a delta. */
interface Gathered<T> {
  readonly changed: Map<string, T>;
  readonly added: { readonly index: number; readonly item: T }[];
  readonly removed: Set<string>;
  order: string[] | undefined;
}

/**
 * A delta being received: each chunk is gathered here (`applyChunk`, a few milliseconds), and the
 * build is put together from it and its base only once the last chunk is in (`assemble`), so the
 * build that serves is swapped whole. The caller owns it, one per delta.
 */
export interface Staging {
  readonly seq: number;
  readonly from: number;
  header: DeltaHeader | undefined;
  complete: boolean;
  readonly virtualHosts: Gathered<IRVirtualHost>;
  readonly clusters: Gathered<IRCluster>;
  readonly resources: Record<ResourceType, Gathered<EncodedResource>>;
}

/** An empty staging area for the delta whose first chunk is `first`. */
export function startStaging(first: DeltaChunk): Staging {
  const gathered = <T>(): Gathered<T> => ({
    changed: new Map(),
    added: [],
    removed: new Set(),
    order: undefined,
  });
  const resources = {} as Record<ResourceType, Gathered<EncodedResource>>;
  for (const type of RESOURCE_TYPES) resources[type] = gathered();
  return {
    seq: first.seq,
    from: first.from,
    header: undefined,
    complete: false,
    virtualHosts: gathered(),
    clusters: gathered(),
    resources,
  };
}

/**
 * Gathers `chunk` into `staging`: the resources become EncodedResources over the chunk's
 * transferred bytes (views, no copy). Throws when the chunk belongs to another delta.
 */
export function applyChunk(staging: Staging, chunk: DeltaChunk): void {
  if (chunk.seq !== staging.seq || chunk.from !== staging.from || staging.complete) {
    throw new Error(
      `delta chunk of build ${chunk.seq} (from ${chunk.from}) does not belong to build ${staging.seq}`,
    );
  }
  if (chunk.header !== undefined) staging.header = chunk.header;
  gather(staging.virtualHosts, chunk.virtualHosts, (item) => item);
  gather(staging.clusters, chunk.clusters, (item) => item);
  for (const type of RESOURCE_TYPES) {
    const bytes = chunk.bytes;
    gather(staging.resources[type], chunk.resources?.[type], (ref): EncodedResource => {
      if (bytes === undefined) throw new Error('delta chunk has resources but no bytes');
      return { name: ref.name, version: ref.version, bytes: new Uint8Array(bytes, ref.offset, ref.length) };
    });
  }
  if (chunk.last) staging.complete = true;
}

function gather<T, U extends { readonly name: string }>(
  into: Gathered<U>,
  patch: ItemsPatch<T> | undefined,
  convert: (item: T) => U,
): void {
  if (patch === undefined) return;
  for (const item of patch.changed ?? []) {
    const made = convert(item);
    into.changed.set(made.name, made);
  }
  for (const { index, item } of patch.added ?? []) into.added.push({ index, item: convert(item) });
  for (const name of patch.removed ?? []) into.removed.add(name);
  if (patch.order !== undefined) (into.order ??= []).push(...patch.order);
}

/**
 * The build `staging` describes, put together from `base` (what the main thread last received):
 * unchanged items, resource maps and the key ring are the base's very objects. Throws when the
 * delta is not from `base` or does not fit it (the caller then starts the worker afresh).
 */
export function assemble(base: ReceivedBuild | undefined, staging: Staging): ReceivedBuild {
  const { header } = staging;
  if (!staging.complete || header === undefined) throw new Error(`build ${staging.seq} is incomplete`);
  if (staging.from !== (base?.seq ?? 0)) {
    throw new Error(`delta from build ${staging.from} cannot apply to build ${base?.seq ?? 0}`);
  }
  const before = base?.build;
  const virtualHosts = assembleItems(before?.ir.virtualHosts ?? [], staging.virtualHosts);
  const clusters = assembleItems(before?.ir.clusters ?? [], staging.clusters);
  const parts: Record<string, unknown> = { ...header.ir, virtualHosts, clusters };
  const ir = Object.fromEntries(header.irKeys.map((key) => [key, parts[key]])) as unknown as IR;
  const keys =
    header.secrets !== undefined ? buildKeyRing(keySecretsOf(header.secrets), before?.keys) : before?.keys;
  if (keys === undefined) throw new Error('the first delta carries no key ring secrets');
  const resources = {} as Record<ResourceType, ReadonlyMap<string, EncodedResource>>;
  const changedNames: Partial<Record<ResourceType, readonly string[]>> = {};
  for (const type of RESOURCE_TYPES) {
    const was = before?.snapshot.resources[type] ?? new Map<string, EncodedResource>();
    const gathered = staging.resources[type];
    const items = assembleItems([...was.values()], gathered);
    resources[type] =
      items === undefined || unchanged(gathered) ? was : new Map(items.map((r) => [r.name, r]));
    // Named only when few: a reader compares everything anyway when most of a type changed, and
    // sorting tens of thousands of names would cost the main thread for nothing.
    const names = namesOf(gathered);
    if (names !== undefined && fewChanges(names.size, was.size)) changedNames[type] = [...names].sort();
  }
  const changedFrom: SnapshotChanges | undefined =
    before === undefined ? undefined : { typeVersions: before.snapshot.typeVersions, names: changedNames };
  const snapshot: Snapshot = {
    version: header.snapshotVersion,
    typeVersions: header.typeVersions,
    resources,
    ...(changedFrom === undefined ? {} : { changedFrom }),
  };
  const hosts = namesOf(staging.virtualHosts);
  const clusterNames = namesOf(staging.clusters);
  const changes: BuildChanges | undefined =
    before === undefined || hosts === undefined || clusterNames === undefined
      ? undefined
      : { base: before.ir, virtualHosts: hosts, clusters: clusterNames };
  return {
    seq: staging.seq,
    build: { ...header.rest, ir, keys, snapshot, ...(changes === undefined ? {} : { changes }) },
  };
}

/**
 * The names `gathered` changed, added or removed; undefined when it reorders (`order`: what moved
 * is not told, so compare everything).
 */
function namesOf<T extends { readonly name: string }>(gathered: Gathered<T>): Set<string> | undefined {
  if (gathered.order !== undefined) return undefined;
  const names = new Set(gathered.changed.keys());
  for (const { item } of gathered.added) names.add(item.name);
  for (const name of gathered.removed) names.add(name);
  return names;
}

function unchanged<T>(gathered: Gathered<T>): boolean {
  return (
    gathered.changed.size === 0 &&
    gathered.added.length === 0 &&
    gathered.removed.size === 0 &&
    gathered.order === undefined
  );
}

/** `before` with `gathered` applied (see ItemsPatch); `before` itself when nothing changed. */
function assembleItems<T extends { readonly name: string }>(
  before: readonly T[],
  gathered: Gathered<T>,
): T[] {
  if (unchanged(gathered)) return before as T[];
  const { changed, added, removed, order } = gathered;
  if (order !== undefined) {
    const previous = new Map(before.map((item) => [item.name, item]));
    for (const { item } of added) previous.set(item.name, item);
    return order.map((name) => {
      const item = changed.get(name) ?? previous.get(name);
      if (item === undefined) throw new Error(`delta names ${name}, which neither it nor its base holds`);
      return item;
    });
  }
  const kept = (removed.size === 0 ? before : before.filter((item) => !removed.has(item.name))).map(
    (item) => changed.get(item.name) ?? item,
  );
  if (added.length === 0) return kept;
  const result: T[] = [];
  let next = 0;
  for (const { index, item } of added) {
    while (result.length < index) {
      const keep = kept[next++];
      if (keep === undefined) throw new Error(`delta adds ${item.name} at ${index}, past the end`);
      result.push(keep);
    }
    result.push(item);
  }
  while (next < kept.length) result.push(kept[next++] as T);
  return result;
}

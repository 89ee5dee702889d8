import type { IR, IRCluster, IRVirtualHost } from '../ir/types.js';
import { RESOURCE_TYPES, type ResourceType } from '../proto/type-urls.js';
import type { EncodedResource, Snapshot } from '../xds/snapshot/types.js';
import type { NewlyPublic } from './exposure.js';
import type { PublishedBuild } from './subscribers.js';
import { plainSecrets, samePlainSecrets, type PlainSecrets } from './plain-secrets.js';

/**
 * What one good build sends from the build worker to the main thread: only what changed since the
 * build it sent before (`from`), split into chunks the main thread applies one event-loop turn at
 * a time (see build-worker.ts). Every part is plain data (structured clone); the changed
 * resources' bytes travel packed into one ArrayBuffer per chunk, transferred, not copied.
 */
export interface DeltaChunk {
  /** The number of the build this one is a delta from (0: none, everything is sent). */
  readonly from: number;
  /** This build's number (the next delta's `from`). */
  readonly seq: number;
  /** The build's small parts: first chunk only. */
  readonly header?: DeltaHeader;
  readonly virtualHosts?: ItemsPatch<IRVirtualHost>;
  readonly clusters?: ItemsPatch<IRCluster>;
  readonly resources?: Partial<Record<ResourceType, ItemsPatch<ResourceRef>>>;
  /** The bytes of this chunk's resources, each at its `ResourceRef` offset. */
  readonly bytes?: ArrayBuffer;
  /** The build is complete once this chunk is applied. */
  readonly last: boolean;
}

/** The parts of a build sent whole, in the first chunk. */
export interface DeltaHeader {
  /** The IR without its two long arrays (sent as patches). */
  readonly ir: Omit<IR, 'virtualHosts' | 'clusters'>;
  /** The IR's keys in their order, so the IR put together again is the same object literal. */
  readonly irKeys: readonly string[];
  /** The key ring's secrets, when they changed (the main thread builds the ring from them). */
  readonly secrets?: PlainSecrets;
  readonly snapshotVersion: string;
  readonly typeVersions: Snapshot['typeVersions'];
  /** ok, warnings, filesRead, timings: whatever else the build reports. */
  readonly rest: Omit<PublishedBuild, 'ir' | 'keys' | 'snapshot'>;
  /** Protected paths this build made public (logged at warn by the main thread). */
  readonly opened: readonly NewlyPublic[];
}

/**
 * Changes to one named, ordered collection. `changed` replaces items of the same name, `removed`
 * drops names, `added` inserts new ones at their index in the new order (ascending); the items
 * kept keep their relative order. When they do not (or names repeat), `order` is the whole new
 * sequence of names instead, and an item not in `changed` or `added` is the previous one.
 */
export interface ItemsPatch<T> {
  readonly changed?: readonly T[];
  readonly added?: readonly { readonly index: number; readonly item: T }[];
  readonly removed?: readonly string[];
  readonly order?: readonly string[];
}

/** An encoded resource whose bytes are `length` bytes at `offset` of its chunk's `bytes`. */
export interface ResourceRef {
  readonly name: string;
  readonly version: string;
  readonly offset: number;
  readonly length: number;
}

/** What the sender remembers of the build it sent last (the next delta's base). */
export interface SentBase {
  readonly seq: number;
  readonly ir: IR;
  readonly secrets: PlainSecrets;
  readonly snapshot: Snapshot;
}

/** How much one chunk carries at most: items (IR items and resources) and names. */
export interface ChunkLimits {
  readonly items: number;
  readonly names: number;
}

/** A few hundred items per chunk: a few milliseconds of structured-clone reading on the main thread. */
export const DEFAULT_CHUNK_LIMITS: ChunkLimits = { items: 250, names: 4000 };

/** A whole patch of one collection, before it is cut into chunks. */
interface FullPatch<T> {
  readonly changed: T[];
  readonly added: { index: number; item: T }[];
  readonly removed: string[];
  readonly order: string[] | undefined;
}

/**
 * The delta from `base` (the build sent before; undefined: none, or a fresh worker) to `build`,
 * cut into chunks of at most `limits`, and the base for the next delta. IR items count as changed
 * when they are not the very same object (the pipeline hands back the same objects for what did
 * not change); resources when their version (a hash of their bytes) differs. Pure.
 */
export function diffBuild(
  base: SentBase | undefined,
  build: PublishedBuild,
  opened: readonly NewlyPublic[],
  limits: ChunkLimits = DEFAULT_CHUNK_LIMITS,
): { readonly chunks: DeltaChunk[]; readonly next: SentBase } {
  const { ir, keys, snapshot, ...rest } = build;
  const { virtualHosts, clusters, ...small } = ir;
  const secrets = plainSecrets(keys);
  const seq = (base?.seq ?? 0) + 1;
  const header: DeltaHeader = {
    ir: small,
    irKeys: Object.keys(ir),
    ...(base !== undefined && samePlainSecrets(base.secrets, secrets) ? {} : { secrets }),
    snapshotVersion: snapshot.version,
    typeVersions: snapshot.typeVersions,
    rest,
    opened,
  };
  const same = <T>(a: T, b: T): boolean => a === b;
  const sameResource = (a: EncodedResource, b: EncodedResource): boolean =>
    a === b || a.version === b.version;
  const resources = RESOURCE_TYPES.map(
    (type) =>
      [
        type,
        diffItems(
          [...(base?.snapshot.resources[type].values() ?? [])],
          [...snapshot.resources[type].values()],
          sameResource,
        ),
      ] as const,
  );
  const chunks = cut(
    seq,
    base?.seq ?? 0,
    header,
    diffItems(base?.ir.virtualHosts ?? [], virtualHosts, same),
    diffItems(base?.ir.clusters ?? [], clusters, same),
    resources,
    limits,
  );
  return { chunks, next: { seq, ir, secrets, snapshot } };
}

/** The patch from `before` to `after` (see ItemsPatch). */
function diffItems<T extends { readonly name: string }>(
  before: readonly T[],
  after: readonly T[],
  same: (a: T, b: T) => boolean,
): FullPatch<T> {
  const previous = new Map(before.map((item) => [item.name, item]));
  const names = new Set(after.map((item) => item.name));
  if (previous.size !== before.length || names.size !== after.length) {
    // Names repeat: no patch by name; every name removed, and everything again, in order.
    return {
      changed: [],
      added: after.map((item, index) => ({ index, item })),
      removed: [...previous.keys()],
      order: undefined,
    };
  }
  const changed: T[] = [];
  const added: { index: number; item: T }[] = [];
  after.forEach((item, index) => {
    const was = previous.get(item.name);
    if (was === undefined) added.push({ index, item });
    else if (!same(was, item)) changed.push(item);
  });
  const removed = before.filter((item) => !names.has(item.name)).map((item) => item.name);
  const keptBefore = before.filter((item) => names.has(item.name));
  const keptAfter = after.filter((item) => previous.has(item.name));
  const inOrder = keptBefore.every((item, i) => keptAfter[i]?.name === item.name);
  if (inOrder) return { changed, added, removed, order: undefined };
  return {
    changed: [...changed, ...added.map(({ item }) => item)],
    added: [],
    removed: [],
    order: after.map((item) => item.name),
  };
}

/** Cuts the patches into chunks: the header first, then the items, then the names. */
function cut(
  seq: number,
  from: number,
  header: DeltaHeader,
  virtualHosts: FullPatch<IRVirtualHost>,
  clusters: FullPatch<IRCluster>,
  resources: readonly (readonly [ResourceType, FullPatch<EncodedResource>])[],
  limits: ChunkLimits,
): DeltaChunk[] {
  const chunks: Mutable[] = [{ from, seq, header }];
  let items = 0;
  let names = 0;
  const room = (kind: 'items' | 'names'): Mutable => {
    const full = kind === 'items' ? items >= limits.items : names >= limits.names;
    if (full) {
      chunks.push({ from, seq });
      items = 0;
      names = 0;
    }
    if (kind === 'items') items += 1;
    else names += 1;
    return chunks[chunks.length - 1] as Mutable;
  };
  const spread = <T>(patch: FullPatch<T>, target: (chunk: Mutable) => MutablePatch<T>): void => {
    for (const item of patch.changed) (target(room('items')).changed ??= []).push(item);
    for (const entry of patch.added) (target(room('items')).added ??= []).push(entry);
    for (const name of patch.removed) (target(room('names')).removed ??= []).push(name);
    for (const name of patch.order ?? []) (target(room('names')).order ??= []).push(name);
  };
  spread(virtualHosts, (chunk) => (chunk.virtualHosts ??= {}));
  spread(clusters, (chunk) => (chunk.clusters ??= {}));
  for (const [type, patch] of resources) {
    spread(patch, (chunk) => ((chunk.resources ??= {})[type] ??= {}));
  }
  return chunks.map((chunk, index) => pack(chunk, index === chunks.length - 1));
}

type MutablePatch<T> = {
  changed?: T[];
  added?: { index: number; item: T }[];
  removed?: string[];
  order?: string[];
};

/** A chunk being filled: resources still hold their bytes (`pack` moves them into one buffer). */
interface Mutable {
  from: number;
  seq: number;
  header?: DeltaHeader;
  virtualHosts?: MutablePatch<IRVirtualHost>;
  clusters?: MutablePatch<IRCluster>;
  resources?: Partial<Record<ResourceType, MutablePatch<EncodedResource>>>;
}

/** The chunk with its resources' bytes copied into one ArrayBuffer, each referred to by offset. */
function pack(chunk: Mutable, last: boolean): DeltaChunk {
  const { resources, ...rest } = chunk;
  if (resources === undefined) return { ...rest, last };
  let size = 0;
  for (const patch of Object.values(resources)) {
    for (const resource of patch.changed ?? []) size += resource.bytes.byteLength;
    for (const { item } of patch.added ?? []) size += item.bytes.byteLength;
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  const ref = ({ name, version, bytes: from }: EncodedResource): ResourceRef => {
    bytes.set(from, offset);
    offset += from.byteLength;
    return { name, version, offset: offset - from.byteLength, length: from.byteLength };
  };
  const packed: Partial<Record<ResourceType, ItemsPatch<ResourceRef>>> = {};
  for (const [type, patch] of Object.entries(resources) as [ResourceType, MutablePatch<EncodedResource>][]) {
    const { changed, added, removed, order } = patch;
    packed[type] = {
      ...(changed === undefined ? {} : { changed: changed.map(ref) }),
      ...(added === undefined ? {} : { added: added.map(({ index, item }) => ({ index, item: ref(item) })) }),
      ...(removed === undefined ? {} : { removed }),
      ...(order === undefined ? {} : { order }),
    };
  }
  return { ...rest, resources: packed, bytes: bytes.buffer, last };
}

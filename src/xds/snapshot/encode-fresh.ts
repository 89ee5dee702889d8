import { encodeMessageSpans, type ProtoObject } from '../codec/codec.js';
import type { ResourceType } from '../codec/type-urls.js';
import type { CompiledResource } from '../compile/compile.js';
import { isLazy, messageOf, noteMessage } from '../compile/lazy-resource.js';
import { ShapeKeeper } from './shape-keeper.js';
import { HALF_MASK, snapshotEntry, type SnapshotEntry } from './snapshot-entry.js';

/**
 * One resource type of a snapshot being built: its compiled list, its entries (filled where the
 * previous build's entry is reused, to be filled by `encodeFresh` elsewhere), the order to encode
 * in, and the running sums of its entries' line hashes (see `addLine`).
 */
export interface TypeEncoding {
  readonly type: ResourceType;
  readonly list: readonly CompiledResource[];
  readonly entries: (SnapshotEntry | undefined)[];
  /** `encodeOrder[type]` (a permutation of the list's indexes), or undefined: list order. */
  readonly order: Int32Array | undefined;
  /** The sums (high, low) of the line hashes of the entries the type will hold. */
  readonly sums: Int32Array;
  /** How many entries are missing (still to encode). */
  readonly missing: number;
}

/** Adds an entry's line hash to `sums` (two 30-bit lanes that wrap; see `typeVersion`). */
export function addLine(sums: Int32Array, entry: SnapshotEntry): void {
  sums[0] = ((sums[0] as number) + entry.high) & HALF_MASK;
  sums[1] = ((sums[1] as number) + entry.low) & HALF_MASK;
}

/** Takes an entry's line hash out of `sums` (the lanes wrap, so this undoes `addLine`). */
export function dropLine(sums: Int32Array, entry: SnapshotEntry): void {
  sums[0] = ((sums[0] as number) - entry.high) & HALF_MASK;
  sums[1] = ((sums[1] as number) - entry.low) & HALF_MASK;
}

/** At most how many fresh messages of the type with the most are built and encoded at a time. */
const ENCODE_BATCH = 256;

/** Per type, the sample of encoded messages that keeps their shapes alive (see ShapeKeeper). */
const shapeKeepers = new Map<ResourceType, ShapeKeeper>();

/** How many messages each type's ShapeKeeper holds. */
const SHAPES_KEPT_PER_TYPE = 64;

/**
 * Fills every missing entry of every type by building the resource's message and encoding it, and
 * adds each new entry to its type's sums. The types take turns, a stint each per round: the type
 * with the most missing entries encodes up to ENCODE_BATCH of them per round, and every other type
 * the same share of its own, so that each round covers about the same routes in every type. A
 * route's Cluster and ClusterLoadAssignment are one record over one IR cluster, and its host's
 * table and scope one record over one IR host (see LazyResource); in encode order (the memory
 * order compile hands on) the k-th resource of each type comes from about the k-th route. Encoded
 * a type at a time, each type's walk read that IR again after the other walks had pushed it out of
 * the cache: at 10,000 routes the endpoints walk cost 1.8-2.1 us per route against 1.2 us at 1,000.
 * Taking turns reads each route's IR while the previous stint's reads of it are still cached.
 * Each stint's messages are encoded at its end (`encodeMessageSpans`) and dropped, so a cold build
 * never holds more than one batch of messages at once (they would survive, and be copied by, each
 * young-generation collection the build runs). A reload has few missing entries: one round.
 */
export function encodeFresh(types: readonly TypeEncoding[]): void {
  let most = 0;
  for (const type of types) most = Math.max(most, type.missing);
  const rounds = Math.ceil(most / ENCODE_BATCH);
  const walks = types.map((type) => new FreshWalk(type));
  for (let round = 1; round <= rounds; round++) {
    for (const walk of walks) walk.encodeUpTo(Math.round((walk.encoding.missing * round) / rounds));
  }
}

/** One type's walk through its list in encode order, encoding the missing entries a stint at a time. */
class FreshWalk {
  /** The next position in encode order. */
  private next = 0;
  /** How many missing entries have been encoded. */
  private encoded = 0;
  private readonly ordered: boolean;
  private readonly keeper: ShapeKeeper;
  private readonly indexes: number[] = [];
  private readonly messages: ProtoObject[] = [];

  constructor(readonly encoding: TypeEncoding) {
    this.ordered = encoding.order !== undefined && encoding.order.length === encoding.list.length;
    let keeper = shapeKeepers.get(encoding.type);
    if (keeper === undefined) {
      keeper = new ShapeKeeper(SHAPES_KEPT_PER_TYPE);
      shapeKeepers.set(encoding.type, keeper);
    }
    this.keeper = keeper;
  }

  /**
   * Builds the messages of the missing entries until `target` are encoded, then encodes them. The
   * first lazily built message of the stint is kept a while longer, to keep its shape (see
   * ShapeKeeper). A lazy resource also keeps the facts the consistency check reads from the
   * message it was just built into.
   */
  encodeUpTo(target: number): void {
    const { type, list, entries, order } = this.encoding;
    let keptOne = false;
    while (this.encoded < target) {
      const i = this.ordered ? ((order as Int32Array)[this.next] as number) : this.next;
      this.next++;
      if (entries[i] !== undefined) continue;
      const resource = list[i] as CompiledResource;
      const message = messageOf(type, resource);
      if (isLazy(resource)) {
        noteMessage(type, resource, message);
        // Only lazily built messages: one held by its resource keeps its shape already, and may be
        // large (the single RouteConfiguration holds every host).
        if (!keptOne) this.keeper.keep(message);
        keptOne = true;
      }
      this.indexes.push(i);
      this.messages.push(message);
      this.encoded++;
    }
    if (this.messages.length > 0) this.flush();
  }

  private flush(): void {
    const { type, list, entries, sums } = this.encoding;
    const { blocks, blockOf, starts, ends } = encodeMessageSpans(type, this.messages);
    for (let at = 0; at < this.indexes.length; at++) {
      const index = this.indexes[at] as number;
      const entry = snapshotEntry(
        (list[index] as CompiledResource).name,
        blocks[blockOf[at] as number] as Uint8Array,
        starts[at] as number,
        ends[at] as number,
      );
      entries[index] = entry;
      addLine(sums, entry);
    }
    this.indexes.length = 0;
    this.messages.length = 0;
  }
}

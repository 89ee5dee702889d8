import type { Message } from './messages.js';
import type { ResourceType } from './type-urls.js';

/**
 * One compiled xDS resource of type `T` before encoding: its name (what Envoy subscribes to and
 * the snapshot keys it by) and its message, typed as that resource's Envoy message (a Cluster for
 * CDS, ...; see messages.ts). Defined here, beside the codec, so that compile (which makes these)
 * and the snapshot (which encodes them) share the type without the snapshot importing compile.
 * Without `T`, a resource of any served type.
 */
export interface CompiledResource<T extends ResourceType = ResourceType> {
  readonly name: string;
  readonly message: Message<T>;
  /**
   * A content hash of everything the name and message were made from (compile sets it from the IR
   * it read): two resources of one type with the same key are equal, so the snapshot may reuse an
   * earlier encoding by key instead of hashing the message itself. Absent: the snapshot hashes the
   * name and message. A copy whose message is edited must drop it.
   */
  readonly contentKey?: string;
}

/**
 * Every resource type's compiled resources, each list sorted by strictly increasing name (no two
 * resources of a type share a name) and typed by its message. Treated as immutable once made.
 */
export type CompiledResources = { readonly [T in ResourceType]: readonly CompiledResource<T>[] };

import type { ProtoObject } from '../codec/codec.js';
import {
  CLUSTER_TYPE,
  RESOURCE_TYPES,
  ROUTE_CONFIGURATION_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
  type ResourceType,
} from '../codec/type-urls.js';
import type { CompiledResource, CompiledResources, EagerResource } from './compile.js';

/**
 * What the consistency check reads of a compiled message, and nothing more: small enough to keep
 * for every resource when the message itself is not kept.
 */
export interface ResourceFacts {
  /** Clusters: an EDS cluster, which needs a ClusterLoadAssignment of its name. */
  readonly eds: boolean;
  /**
   * RouteConfigurations: each (virtual host, cluster) a route points at, flat and in message
   * order (`[vhost, cluster, vhost, cluster, ...]`). Scopes: the RouteConfiguration they name
   * (one item; none when the message names none). Other types: empty.
   */
  readonly references: readonly string[];
}

/** The facts of a message with none to report (endpoints, listeners): shared, never mutated. */
export const NO_FACTS: ResourceFacts = Object.freeze({
  eds: false,
  references: Object.freeze([]) as readonly string[],
});

/** The facts of an EDS cluster: shared, never mutated. */
export const EDS_FACTS: ResourceFacts = Object.freeze({ eds: true, references: NO_FACTS.references });

/** The parts of a RouteConfiguration message the facts are read from. */
interface RouteConfigurationShape {
  readonly virtual_hosts?: readonly {
    readonly name: string;
    readonly routes: readonly { readonly route?: { readonly cluster?: string } }[];
  }[];
}

/** Reads the facts of a `type` message (see ResourceFacts). */
export function factsOfMessage(type: ResourceType, message: ProtoObject): ResourceFacts {
  if (type === CLUSTER_TYPE) return message.type === 'EDS' ? EDS_FACTS : NO_FACTS;
  if (type === SCOPED_ROUTE_CONFIGURATION_TYPE) {
    const target = message.route_configuration_name;
    return typeof target === 'string' ? { eds: false, references: [target] } : NO_FACTS;
  }
  if (type !== ROUTE_CONFIGURATION_TYPE) return NO_FACTS;
  const virtualHosts = (message as RouteConfigurationShape).virtual_hosts ?? [];
  // Counted first, so the kept list has no spare room: a list grown by pushes keeps a backing
  // store of 17 or more slots (168 bytes for a host's four names, 10,000 of them at 10,000 hosts).
  let count = 0;
  for (const vhost of virtualHosts)
    for (const route of vhost.routes) if (route.route?.cluster !== undefined) count += 2;
  if (count === 0) return NO_FACTS;
  const references = referenceList(count);
  let at = 0;
  for (const vhost of virtualHosts) {
    for (const route of vhost.routes) {
      const cluster = route.route?.cluster;
      if (cluster === undefined) continue;
      references[at++] = vhost.name;
      references[at++] = cluster;
    }
  }
  return { eds: false, references };
}

/**
 * A list of `count` references to fill in. A host table kept its list for the life of its build,
 * and V8 pretenures the arrays of a literal whose arrays survive, never those of `new Array(n)`:
 * the common sizes (a host with one or two routes, with or without the JWKS route) are literals,
 * so a 10,000-host build's lists are not born young and copied by its collections.
 */
function referenceList(count: number): string[] {
  const unset = '';
  if (count === 4) return [unset, unset, unset, unset];
  if (count === 2) return [unset, unset];
  if (count === 6) return [unset, unset, unset, unset, unset, unset];
  return new Array<string>(count);
}

/**
 * How the lazy resources of one kind build their messages and say their facts: one shared object
 * per kind (a route's cluster, a host's table), so a resource is a plain record pointing at it.
 */
export interface LazyBuilder {
  /** A fresh message of `resource` as listed under `type` (a resource may be listed under two). */
  message(type: ResourceType, resource: LazyResource): ProtoObject;
  /**
   * Whether the facts of `type` are read from its message, once, and kept in `resource.facts`;
   * otherwise `derivedFacts` says them from the resource's own fields, with no message.
   */
  keepsFactsOf(type: ResourceType): boolean;
  /** The facts of `type` read off the resource's fields, equal to the message's (tests compare). */
  derivedFacts(type: ResourceType, resource: LazyResource): ResourceFacts;
}

/**
 * A compiled resource whose messages are built when read (`messageOf`), every time, and not kept.
 * A cold build at 10,000 routes holds 20,000 of these instead of 40,000 message trees (~28 MB):
 * the snapshot builds each message just before encoding it, in small batches, so the trees die
 * young, and the control plane keeps no second copy of what the encoded bytes already say.
 *
 * One record can be listed under two types (a route's Cluster and its ClusterLoadAssignment; a
 * host's RouteConfiguration and the scope that names it, which share a name), and it is a plain
 * record, made by an object literal, not a class instance: V8 pretenures the objects of a literal
 * whose objects survive (allocation-site pretenuring) and never those of a class, so a record
 * that lives as long as its build is born in the old generation instead of being copied by the
 * one or two young-generation collections a cold 10,000-route build runs. Every kind's records
 * have the same fields in the same order, so V8 gives them one shape. Reuse across builds is by
 * identity of these records (compile hands an unchanged route the same one), never by message.
 */
export interface LazyResource {
  readonly name: string;
  readonly lazy: LazyBuilder;
  /** The IR object the messages are built from (the kind's builder knows which). */
  readonly source: object;
  /** What else the builder needs, shared by the build's records of its kind (or undefined). */
  readonly context: object | undefined;
  /**
   * Kept facts: set when the record is made (a cluster's, from its IR), or read once from the
   * first message built for a type the builder `keepsFactsOf` (a host table's references).
   */
  facts: ResourceFacts | readonly string[] | undefined;
}

/** Whether a compiled resource is a lazy record (else it holds its message). */
export function isLazy(resource: CompiledResource): resource is LazyResource {
  return (resource as Partial<LazyResource>).lazy !== undefined;
}

/** The message of `resource` listed under `type`: built afresh for a lazy one (read it once per use). */
export function messageOf(type: ResourceType, resource: CompiledResource): ProtoObject {
  return isLazy(resource) ? resource.lazy.message(type, resource) : resource.message;
}

/** Hands over a message just built from `resource` for `type`, so its facts need no build of their own. */
export function noteMessage(type: ResourceType, resource: LazyResource, message: ProtoObject): void {
  if (resource.facts === undefined && resource.lazy.keepsFactsOf(type))
    resource.facts = compactFacts(factsOfMessage(type, message));
}

/** The facts of `resource` as listed under `type` (kept, derived, or read from its message). */
export function factsOf(type: ResourceType, resource: CompiledResource): ResourceFacts {
  if (!isLazy(resource)) return factsOfMessage(type, resource.message);
  if (!resource.lazy.keepsFactsOf(type)) return resource.lazy.derivedFacts(type, resource);
  const kept = keptFacts(type, resource);
  return isReferenceList(kept) ? { eds: false, references: kept } : kept;
}

/** `factsOf(type, resource).references`, without a facts object made for kept references. */
export function referencesOf(type: ResourceType, resource: CompiledResource): readonly string[] {
  if (!isLazy(resource)) return factsOfMessage(type, resource.message).references;
  if (!resource.lazy.keepsFactsOf(type)) return resource.lazy.derivedFacts(type, resource).references;
  const kept = keptFacts(type, resource);
  return isReferenceList(kept) ? kept : kept.references;
}

/** `factsOf(type, resource).eds`, without a facts object made for kept references. */
export function isEdsResource(type: ResourceType, resource: CompiledResource): boolean {
  if (!isLazy(resource)) return factsOfMessage(type, resource.message).eds;
  if (!resource.lazy.keepsFactsOf(type)) return resource.lazy.derivedFacts(type, resource).eds;
  const kept = keptFacts(type, resource);
  return !isReferenceList(kept) && kept.eds;
}

/** The kept facts, read from a message of their own when none was noted. */
function keptFacts(type: ResourceType, resource: LazyResource): ResourceFacts | readonly string[] {
  resource.facts ??= compactFacts(factsOfMessage(type, resource.lazy.message(type, resource)));
  return resource.facts;
}

/**
 * Facts as a record keeps them: the shared objects as they are, the references alone otherwise
 * (one object fewer per host table, 10,000 at 10,000 hosts).
 */
function compactFacts(facts: ResourceFacts): ResourceFacts | readonly string[] {
  return facts === EDS_FACTS || facts === NO_FACTS || facts.eds ? facts : facts.references;
}

function isReferenceList(kept: ResourceFacts | readonly string[]): kept is readonly string[] {
  return Array.isArray(kept);
}

/**
 * Whether `now` compiles to the same message as `old`, judged without building either: the same
 * object, or two resources that hold the very same message object under the same name. Two lazy
 * resources are the same only as one record (their messages are fresh on every read).
 */
export function sameCompiledResource(old: CompiledResource, now: CompiledResource): boolean {
  if (old === now) return true;
  if (isLazy(old) || isLazy(now)) return false;
  return old.name === now.name && old.message === now.message;
}

/**
 * `compiled` with every message built once and held (plain `{name, message}` resources): for
 * callers that read messages more than once or edit them, such as `portcullis compile`, the
 * benchmark's reference encoder (which times encoding alone) and tests that break a resource on
 * purpose. The messages still share frozen constants; copy them before editing.
 */
export function withBuiltMessages(compiled: CompiledResources): BuiltResources {
  const out: Partial<Record<ResourceType, readonly EagerResource[]>> = {};
  for (const type of RESOURCE_TYPES) {
    out[type] = compiled[type].map((resource) => ({
      name: resource.name,
      message: messageOf(type, resource),
    }));
  }
  return out as BuiltResources;
}

/** Compiled resources with every message built and held (see `withBuiltMessages`). */
export type BuiltResources = Readonly<Record<ResourceType, readonly EagerResource[]>>;

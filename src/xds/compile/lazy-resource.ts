import type { ProtoObject } from '../codec/codec.js';
import {
  CLUSTER_TYPE,
  RESOURCE_TYPES,
  ROUTE_CONFIGURATION_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
  type ResourceType,
} from '../codec/type-urls.js';
import type { CompiledResource, CompiledResources } from './compile.js';

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
const NO_FACTS: ResourceFacts = Object.freeze({
  eds: false,
  references: Object.freeze([]) as readonly string[],
});

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
  const references = new Array<string>(count);
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

const EDS_FACTS: ResourceFacts = Object.freeze({ eds: true, references: NO_FACTS.references });

/**
 * A compiled resource whose message is built when it is read, every time, and not kept. A cold
 * build at 10,000 routes holds 40,000 of these instead of 40,000 message trees (~28 MB): the
 * snapshot builds each message just before encoding it, in small batches, so the trees die young
 * instead of being copied by every young-generation collection the build runs, and the control
 * plane does not keep a second copy of what the encoded bytes already say. Reuse across builds is
 * by identity of these objects (compile hands an unchanged route the same one), never by message.
 * The consistency check's facts are read from the message once, when the snapshot encodes it (or
 * on first use), and kept.
 */
export abstract class LazyResource implements CompiledResource {
  /**
   * The facts, kept as their references alone when the resource is not an EDS cluster (all but the
   * shared EDS_FACTS): one object fewer per resource, 20,000 at 10,000 routes.
   */
  #facts: ResourceFacts | readonly string[] | undefined;

  constructor(
    readonly name: string,
    private readonly type: ResourceType,
  ) {}

  /** A fresh message on every read; callers that need it twice keep the object themselves. */
  abstract get message(): ProtoObject;

  /** The facts of this resource's message (built once for them, unless `noteMessage` came first). */
  get facts(): ResourceFacts {
    const kept = this.keptFacts();
    return isReferenceList(kept) ? { eds: false, references: kept } : kept;
  }

  /**
   * The facts as kept (see `#facts`), or as `derivedFacts` reads them afresh; otherwise built from
   * a message of their own if none was noted.
   */
  keptFacts(): ResourceFacts | readonly string[] {
    if (this.#facts !== undefined) return this.#facts;
    if (this.derivesFacts) return this.derivedFacts();
    this.#facts = compactFacts(factsOfMessage(this.type, this.message));
    return this.#facts;
  }

  /** Hands over a message just built from this resource, so its facts need no build of their own. */
  noteMessage(message: ProtoObject): void {
    if (this.#facts === undefined && !this.derivesFacts)
      this.#facts = compactFacts(factsOfMessage(this.type, message));
  }

  /**
   * Whether `derivedFacts` reads the facts off this resource's own fields. Such a resource keeps
   * none: a kept reference list is an array and its backing store, 20,000 objects for 10,000 host
   * scopes that every young-generation collection of a cold build copies, for facts its name says.
   * (A host's table could say its references from its IR routes as well, but reading those cold
   * IR objects again at check time cost more at 10,000 hosts than keeping the list saved.)
   */
  protected get derivesFacts(): boolean {
    return false;
  }

  /**
   * The facts (kept form, see `#facts`) read off the inputs, equal to those of the message: a
   * subclass with `derivesFacts` overrides both (tests compare the two on every golden case).
   */
  protected derivedFacts(): ResourceFacts | readonly string[] {
    return compactFacts(factsOfMessage(this.type, this.message));
  }
}

/** `facts` as kept by a LazyResource: the shared object, or the references of a non-EDS resource. */
function compactFacts(facts: ResourceFacts): ResourceFacts | readonly string[] {
  return facts === EDS_FACTS || facts === NO_FACTS || facts.eds ? facts : facts.references;
}

function isReferenceList(kept: ResourceFacts | readonly string[]): kept is readonly string[] {
  return Array.isArray(kept);
}

/**
 * The facts of any compiled resource: kept ones for a lazy resource, read from the message for one
 * that holds its message (the listener, the authorize cluster, a single RouteConfiguration, tests).
 */
export function factsOf(type: ResourceType, resource: CompiledResource): ResourceFacts {
  return resource instanceof LazyResource ? resource.facts : factsOfMessage(type, resource.message);
}

/** `factsOf(type, resource).references`, without a facts object made for a lazy resource. */
export function referencesOf(type: ResourceType, resource: CompiledResource): readonly string[] {
  if (!(resource instanceof LazyResource)) return factsOfMessage(type, resource.message).references;
  const kept = resource.keptFacts();
  return isReferenceList(kept) ? kept : kept.references;
}

/** `factsOf(type, resource).eds`, without a facts object made for a lazy resource. */
export function isEdsResource(type: ResourceType, resource: CompiledResource): boolean {
  if (!(resource instanceof LazyResource)) return factsOfMessage(type, resource.message).eds;
  const kept = resource.keptFacts();
  return !isReferenceList(kept) && kept.eds;
}

/**
 * Whether `now` compiles to the same message as `old`, judged without building either: the same
 * object, or two resources that hold the very same message object under the same name. Two lazy
 * resources are the same only as one object (their messages are fresh on every read).
 */
export function sameCompiledResource(old: CompiledResource, now: CompiledResource): boolean {
  if (old === now) return true;
  if (old instanceof LazyResource || now instanceof LazyResource) return false;
  return old.name === now.name && old.message === now.message;
}

/**
 * `compiled` with every message built once and held (plain `{name, message}` resources): for
 * callers that read messages more than once or edit them, such as the benchmark's reference
 * encoder (which times encoding alone) and tests that break a resource on purpose. The messages
 * still share frozen constants; copy them before editing.
 */
export function withBuiltMessages(compiled: CompiledResources): CompiledResources {
  const out: Partial<Record<keyof CompiledResources, readonly CompiledResource[]>> = {};
  for (const type of RESOURCE_TYPES) {
    out[type] = compiled[type].map((resource) => ({ name: resource.name, message: resource.message }));
  }
  return out as CompiledResources;
}

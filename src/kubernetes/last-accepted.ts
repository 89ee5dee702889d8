/**
 * Per-object isolation of route problems (pure): one tenant's bad Ingress must not freeze every
 * other object's changes. The watcher remembers, for each route object (Ingress, Gateway,
 * HTTPRoute; by kind, namespace, name and uid, so a deleted and re-created object is a new one),
 * the version that was part of the last config built and served: its "last accepted version"
 * (`acceptedObjects`). When a pass finds problems in some objects, `substituteProblemObjects`
 * replaces each by its last accepted version, so its routes keep serving as before while the rest
 * of the cluster's changes are published; the old version is translated again against the live
 * Services, so its endpoints keep following the EndpointSlices. An object that has no accepted
 * version (it never built) is left out.
 *
 * When the last accepted version itself has a problem now, the object is left out (the next
 * round), its accepted version kept while it exists (`acceptedAfter`), with one exception: a TLS Secret it read that no longer exists. Then the Secret's data
 * as the last served build read it stands in for the missing Secret (`Substitution.secrets`), so a
 * certificate deleted by mistake does not take a host off the air. That data only ever serves the
 * replaced object: every other object naming the missing Secret has a problem too and is itself
 * replaced by a version that read the same data, or left out. A Secret that exists but is broken
 * (not PEM) gets no stand-in: the object is left out. The problem is reported all along.
 */
import type { Gateway, HTTPRoute, Ingress, ObjectMeta } from './objects.js';
import { refOf, type ObjectRef } from './object-problems.js';
import type { RouteObjects, SecretObject } from './cluster-state.js';
import { secretText, type SecretName } from './secret-refs.js';

/** The kinds a route problem names, and the list of RouteObjects each lives in. */
const LISTS = { Ingress: 'ingresses', Gateway: 'gateways', HTTPRoute: 'httpRoutes' } as const;
type RouteKind = keyof typeof LISTS;
type RouteObject = Ingress | Gateway | HTTPRoute;

/** One object's last accepted version and the TLS Secrets it read then (`ns/name` -> Secret). */
export interface AcceptedObject {
  readonly object: RouteObject;
  readonly secrets: ReadonlyMap<string, { readonly name: SecretName; readonly secret: SecretObject }>;
}

/** The last accepted version of each route object, by `objectKey`. */
export type AcceptedObjects = ReadonlyMap<string, AcceptedObject>;

/** What became of an object a problem named: its last accepted version serves, or it is left out. */
export type ObjectFate = 'previous' | 'never-built' | 'previous-fails';

/** The inputs of one build with the problem objects dealt with (see the module comment). */
export interface Substitution {
  /** The live objects, with each problem object replaced by its last accepted version or left out. */
  readonly routes: RouteObjects;
  /** The live Secrets, plus the last served data of each missing one a replaced version read. */
  readonly secrets: ReadonlyMap<string, SecretObject | undefined>;
  /** The fate of each object a problem named so far, by `refKey`. */
  readonly fates: ReadonlyMap<string, ObjectFate>;
  /** The live Secrets (what `secrets` adds to). */
  readonly liveSecrets: ReadonlyMap<string, SecretObject | undefined>;
  /** The last accepted version of each object now replaced, by `refKey`. */
  readonly replaced: ReadonlyMap<string, AcceptedObject>;
}

/** An object's identity: kind, namespace, name and uid (a re-created object is another one). */
export function objectKey(kind: string, metadata: ObjectMeta): string {
  return [kind, metadata.namespace ?? '', metadata.name, metadata.uid ?? ''].join('\u0000');
}

/** A problem ref's object by kind, namespace and name (what a problem can name). */
export function refKey(ref: ObjectRef): string {
  return [ref.kind, ref.namespace ?? '', ref.name].join('\u0000');
}

/**
 * Every route object of `routes` (the objects a build that served used) as accepted, each with the
 * TLS Secrets it names that `secrets` (what that build read) holds. Objects not in `routes`
 * (deleted, or left out) have no entry, so the map never outgrows the cluster.
 */
export function acceptedObjects(
  routes: RouteObjects,
  secrets: ReadonlyMap<string, SecretObject | undefined>,
): AcceptedObjects {
  const accepted = new Map<string, AcceptedObject>();
  for (const kind of Object.keys(LISTS) as RouteKind[]) {
    for (const object of routes[LISTS[kind]] as readonly RouteObject[]) {
      const read = new Map<string, { name: SecretName; secret: SecretObject }>();
      for (const name of tlsSecretNames(kind, object)) {
        const secret = secrets.get(secretText(name));
        if (secret !== undefined) read.set(secretText(name), { name, secret });
      }
      accepted.set(objectKey(kind, object.metadata), { object, secrets: read });
    }
  }
  return accepted;
}

/**
 * The accepted versions after a build of `built` (the inputs after substitution, with `secrets`)
 * served while the cluster held `live`: each built object as in `acceptedObjects`, and each live
 * object left out with an accepted version in `previous` (its last good version fails too: a
 * Service it routes to is briefly gone) keeps that version, while the same object (same uid)
 * exists. So once the last good version works again it serves again, rather than the object
 * staying out as if it never built until someone fixes its live version. A deleted or re-created
 * object has no live counterpart and drops out.
 */
export function acceptedAfter(
  built: RouteObjects,
  secrets: ReadonlyMap<string, SecretObject | undefined>,
  live: RouteObjects,
  previous: AcceptedObjects,
): AcceptedObjects {
  const accepted = new Map(acceptedObjects(built, secrets));
  for (const kind of Object.keys(LISTS) as RouteKind[]) {
    for (const object of live[LISTS[kind]] as readonly RouteObject[]) {
      const key = objectKey(kind, object.metadata);
      const kept = previous.get(key);
      if (kept !== undefined && !accepted.has(key)) accepted.set(key, kept);
    }
  }
  return accepted;
}

/** How many route objects (Ingresses, Gateways, HTTPRoutes) `routes` holds. */
export function routeObjectCount(routes: RouteObjects): number {
  return (Object.keys(LISTS) as RouteKind[]).reduce((sum, kind) => sum + routes[LISTS[kind]].length, 0);
}

/** The Secrets the last accepted versions read: the watcher keeps following them. */
export function acceptedSecretNames(accepted: AcceptedObjects): SecretName[] {
  const names = new Map<string, SecretName>();
  for (const entry of accepted.values()) for (const [text, { name }] of entry.secrets) names.set(text, name);
  return [...names.values()];
}

/** The first round's inputs: the live objects and Secrets, nothing replaced. */
export function liveInputs(
  routes: RouteObjects,
  secrets: ReadonlyMap<string, SecretObject | undefined>,
): Substitution {
  return { routes, secrets, fates: new Map(), liveSecrets: secrets, replaced: new Map() };
}

/**
 * The next round's inputs after `problems` named these objects in a build of `current`: a live
 * object is replaced by its last accepted version in `accepted` (fate `previous`), or left out
 * when it has none (`never-built`); a replaced one is left out (`previous-fails`). Undefined when
 * nothing changes (no problem names an object that is still built), so the caller's rounds end.
 */
export function substituteProblemObjects(
  current: Substitution,
  problems: readonly ObjectRef[],
  accepted: AcceptedObjects,
): Substitution | undefined {
  const fates = new Map(current.fates);
  const replaced = new Map(current.replaced);
  const swap = new Map<string, RouteObject | undefined>();
  for (const ref of problems) {
    const kind = ref.kind as RouteKind;
    if (!Object.hasOwn(LISTS, kind)) continue;
    const key = refKey(ref);
    if (swap.has(key)) continue;
    const object = findObject(current.routes, kind, ref);
    if (object === undefined) continue;
    const previous = current.fates.has(key) ? undefined : accepted.get(objectKey(kind, object.metadata));
    if (previous === undefined) {
      fates.set(key, current.fates.has(key) ? 'previous-fails' : 'never-built');
      replaced.delete(key);
    } else {
      fates.set(key, 'previous');
      replaced.set(key, previous);
    }
    swap.set(key, previous?.object);
  }
  if (swap.size === 0) return undefined;
  const routes = { ...current.routes };
  for (const kind of Object.keys(LISTS) as RouteKind[]) {
    const list = current.routes[LISTS[kind]] as readonly RouteObject[];
    const next = list.flatMap((object) => {
      const key = refKey(refOf(kind, object.metadata));
      if (!swap.has(key)) return [object];
      const replacement = swap.get(key);
      return replacement === undefined ? [] : [replacement];
    });
    Object.assign(routes, { [LISTS[kind]]: next });
  }
  return {
    routes,
    secrets: standIns(current.liveSecrets, replaced),
    fates,
    liveSecrets: current.liveSecrets,
    replaced,
  };
}

/** `live` with each Secret a replaced version read and that no longer exists, as it read it. */
function standIns(
  live: ReadonlyMap<string, SecretObject | undefined>,
  replaced: ReadonlyMap<string, AcceptedObject>,
): ReadonlyMap<string, SecretObject | undefined> {
  let secrets: Map<string, SecretObject | undefined> | undefined;
  for (const entry of replaced.values()) {
    for (const [text, { secret }] of entry.secrets) {
      if (live.get(text) !== undefined || secrets?.get(text) !== undefined) continue;
      secrets ??= new Map(live);
      secrets.set(text, secret);
    }
  }
  return secrets ?? live;
}

/** What a problem's object has come to, as logs and Events say it after the build was published. */
export function fateText(fate: ObjectFate | undefined): string {
  switch (fate) {
    case 'previous':
      return 'its last good version keeps serving';
    case 'previous-fails':
      return 'left out: its last good version fails too';
    default:
      return 'left out: it never built';
  }
}

/** The object `ref` names in `routes` (kind, namespace, name). */
function findObject(routes: RouteObjects, kind: RouteKind, ref: ObjectRef): RouteObject | undefined {
  return (routes[LISTS[kind]] as readonly RouteObject[]).find(
    ({ metadata }) => metadata.name === ref.name && (metadata.namespace ?? undefined) === ref.namespace,
  );
}

/**
 * The TLS Secrets `object` names (each in its own namespace: the route source refuses any other):
 * an Ingress's `spec.tls[].secretName`, a Gateway's listeners' `tls.certificateRefs`.
 */
function tlsSecretNames(kind: RouteKind, object: RouteObject): SecretName[] {
  const namespace = object.metadata.namespace ?? 'default';
  if (kind === 'Ingress')
    return ((object as Ingress).spec?.tls ?? []).flatMap((tls) =>
      tls.secretName === undefined ? [] : [{ namespace, name: tls.secretName }],
    );
  if (kind === 'Gateway')
    return ((object as Gateway).spec?.listeners ?? []).flatMap((listener) =>
      (listener.tls?.certificateRefs ?? []).map((ref) => ({
        namespace: ref.namespace ?? namespace,
        name: ref.name,
      })),
    );
  return [];
}

/**
 * An HTTPRoute's `status.parents` entries for Portcullis's Gateways (pure): one per parentRef
 * that names a Gateway of our GatewayClass, with the parentRef echoed, our controllerName, and the
 * conditions
 * - `Accepted`: False with NoMatchingParent (no listener has the parentRef's sectionName / port),
 *   NotAllowedByListeners (no such listener takes HTTPRoutes from the route's namespace, or none
 *   of them is itself accepted), NoMatchingListenerHostname (no route hostname matches those
 *   listeners'), or UnsupportedValue for any other problem of the route (an annotation, a match,
 *   a filter: the RouteRefused Event's text). Accepted False on a route that served before means
 *   its change is refused while its last good version keeps serving (the message says so).
 * - `ResolvedRefs`: False with InvalidKind (not a Service), RefNotPermitted (another namespace:
 *   ReferenceGrant is not read) or BackendNotFound (the Service or its port does not exist) for a
 *   backendRef problem; True otherwise. Such a route stays Accepted: its change waits for its
 *   backends, and the message of Accepted says so.
 * Entries of other controllers are kept as they are, in their place; ours follow them.
 */
import { isPlainObject } from '../config/value-readers.js';
import { canonicalJson } from '../shared/canonical-json.js';
import { attaches, GATEWAY_API_GROUP, parentGatewayKey, parentSelects } from './gateway-attachment.js';
import { withTimes, type ConditionFacts } from './gateway-conditions.js';
import { GATEWAY_CONTROLLER, type OpenListener } from './gateway-listeners.js';
import { intersectHosts } from './hosts.js';
import type { Gateway, HTTPRoute, ParentReference } from './objects.js';
import { formatObjectProblem, refOf, type ObjectProblem } from './object-problems.js';

/** What an HTTPRoute's parent status is computed from. */
export interface RouteParentContext {
  /** Our Gateways by `namespace/name`. */
  readonly gateways: ReadonlyMap<string, Gateway>;
  /** Their accepted listeners by `namespace/name` (gateway-listeners.ts). */
  readonly open: ReadonlyMap<string, readonly OpenListener[]>;
  /** Whether some config is in force (a refused change then keeps it). */
  readonly serving: boolean;
  readonly now: Date;
}

const BACKEND_WHERE = /^spec\.rules\[(\d+)\]\.backendRefs\[(\d+)\]$/;
/** Where httproute-routes.ts says a route attaches nowhere: each parent's own condition says why. */
const ATTACHMENT_WHERE = new Set(['spec.parentRefs', 'spec.hostnames']);

/** `; the last good routes keep serving` or `; nothing is served yet`, as the RouteRefused Event ends. */
function servingNote(serving: boolean): string {
  return serving ? 'the last good routes keep serving' : 'nothing is served yet';
}

function joined(problems: readonly ObjectProblem[], serving: boolean): string {
  return `${problems.map(formatObjectProblem).join('; ')}; ${servingNote(serving)}`;
}

/** The ResolvedRefs reason of a backendRef problem, or undefined when it is not about resolving the ref. */
function backendReason(route: HTTPRoute, where: string | undefined): string | undefined {
  const found = BACKEND_WHERE.exec(where ?? '');
  if (found === null) return undefined;
  const ref = route.spec.rules?.[Number(found[1])]?.backendRefs?.[Number(found[2])];
  if (ref === undefined) return undefined;
  if ((ref.group ?? '') !== '' || (ref.kind ?? 'Service') !== 'Service') return 'InvalidKind';
  if ((ref.namespace ?? route.metadata.namespace ?? 'default') !== (route.metadata.namespace ?? 'default'))
    return 'RefNotPermitted';
  if ((ref.filters ?? []).length > 0 || ref.port === undefined) return undefined;
  return 'BackendNotFound';
}

/** The parentRef as the spec has it (the API server's defaults included), for `status.parents[].parentRef`. */
function echo(parent: ParentReference): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const key of ['group', 'kind', 'namespace', 'name', 'sectionName', 'port'] as const)
    if (parent[key] !== undefined) fields[key] = parent[key];
  return fields;
}

/** Why the route does not attach through `parent` to `gateway` (Accepted False), or undefined when it does. */
function attachmentFacts(
  route: HTTPRoute,
  index: number,
  parent: ParentReference,
  gateway: Gateway,
  open: readonly OpenListener[],
): ConditionFacts | undefined {
  const namespace = route.metadata.namespace ?? 'default';
  const object = refOf('HTTPRoute', route.metadata);
  const gatewayText = `Gateway ${gateway.metadata.namespace ?? 'default'}/${gateway.metadata.name}`;
  const refused = (reason: string, where: string, message: string): ConditionFacts => ({
    type: 'Accepted',
    status: 'False',
    reason,
    message: formatObjectProblem({ object, where, message }),
  });
  const at = `spec.parentRefs[${index}]`;
  const selected = gateway.spec.listeners.filter((listener) => parentSelects(parent, listener));
  if (selected.length === 0)
    return refused('NoMatchingParent', at, `${gatewayText} has no listener with this sectionName and port`);
  const allowing = selected.filter((listener) => attaches(parent, namespace, gateway, listener));
  if (allowing.length === 0)
    return refused(
      'NotAllowedByListeners',
      at,
      `no listener of ${gatewayText} takes HTTPRoutes from namespace ${namespace} (allowedRoutes)`,
    );
  const names = new Set(allowing.map((listener) => listener.name));
  const accepted = open.filter((listener) => names.has(listener.name));
  if (accepted.length === 0)
    return refused(
      'NotAllowedByListeners',
      at,
      `the listeners of ${gatewayText} it selects are not accepted (see the Gateway's status)`,
    );
  const hosts = accepted.flatMap((listener) =>
    (route.spec.hostnames ?? ['*']).flatMap((name) => {
      const host = intersectHosts(listener.hostname, name.toLowerCase());
      return host === undefined ? [] : [host];
    }),
  );
  if (hosts.length === 0)
    return refused(
      'NoMatchingListenerHostname',
      'spec.hostnames',
      `no hostname matches a listener hostname of ${gatewayText}`,
    );
  return undefined;
}

/** The conditions of one of our parents. */
function parentFacts(
  route: HTTPRoute,
  attachment: ConditionFacts | undefined,
  problems: readonly ObjectProblem[],
  skipped: readonly ObjectProblem[],
  serving: boolean,
): ConditionFacts[] {
  const own = problems.filter((problem) => !ATTACHMENT_WHERE.has(problem.where ?? ''));
  const backends = own.filter((problem) => backendReason(route, problem.where) !== undefined);
  const others = own.filter((problem) => backendReason(route, problem.where) === undefined);
  const resolved: ConditionFacts =
    backends.length === 0
      ? { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs', message: 'every backendRef resolves' }
      : {
          type: 'ResolvedRefs',
          status: 'False',
          reason: backendReason(route, backends[0]?.where) ?? 'BackendNotFound',
          message: joined(backends, serving),
        };
  let accepted: ConditionFacts;
  if (attachment !== undefined) accepted = attachment;
  else if (others.length > 0)
    accepted = {
      type: 'Accepted',
      status: 'False',
      reason: 'UnsupportedValue',
      message: joined(others, serving),
    };
  else {
    const notes = [
      'accepted by Portcullis',
      ...(backends.length > 0
        ? [`its change is not served until its backendRefs resolve (${servingNote(serving)})`]
        : []),
      ...(skipped.length > 0 ? [`left out: ${skipped.map(formatObjectProblem).join('; ')}`] : []),
    ];
    accepted = { type: 'Accepted', status: 'True', reason: 'Accepted', message: notes.join('; ') };
  }
  return [accepted, resolved];
}

/** Whether a `status.parents` entry (unknown data) is one Portcullis wrote. */
function isOurs(entry: unknown): boolean {
  return isPlainObject(entry) && entry.controllerName === GATEWAY_CONTROLLER;
}

/**
 * The HTTPRoute's new `status` (others' parents entries kept, ours recomputed), or undefined when
 * ours are already what they should be. `problems` and `skipped` are this route's own.
 */
export function httpRouteStatus(
  route: HTTPRoute,
  problems: readonly ObjectProblem[],
  skipped: readonly ObjectProblem[],
  context: RouteParentContext,
): Record<string, unknown> | undefined {
  const namespace = route.metadata.namespace ?? 'default';
  const status = isPlainObject((route as { status?: unknown }).status)
    ? ((route as { status?: unknown }).status as Record<string, unknown>)
    : {};
  const current = Array.isArray(status.parents) ? (status.parents as unknown[]) : [];
  const previousOurs = current.filter(isOurs) as Record<string, unknown>[];
  const ours = (route.spec.parentRefs ?? []).flatMap((parent, index) => {
    const key = parentGatewayKey(parent, namespace);
    const gateway = key === undefined ? undefined : context.gateways.get(key);
    if (key === undefined || gateway === undefined) return [];
    const parentRef = echo(parent);
    const previous = previousOurs.find(
      (entry) => canonicalJson(withDefaults(entry.parentRef)) === canonicalJson(withDefaults(parentRef)),
    );
    const attachment = attachmentFacts(route, index, parent, gateway, context.open.get(key) ?? []);
    const facts = parentFacts(route, attachment, problems, skipped, context.serving);
    return [
      {
        parentRef,
        controllerName: GATEWAY_CONTROLLER,
        conditions: withTimes(facts, previous?.conditions, route.metadata.generation, context.now),
      },
    ];
  });
  if (canonicalJson(ours) === canonicalJson(previousOurs)) return undefined;
  return { ...status, parents: [...current.filter((entry) => !isOurs(entry)), ...ours] };
}

/** A parentRef with the schema's defaults filled in, so one written without them still matches. */
function withDefaults(parentRef: unknown): unknown {
  if (!isPlainObject(parentRef)) return parentRef;
  return { group: GATEWAY_API_GROUP, kind: 'Gateway', ...parentRef };
}

/**
 * Which Gateway listeners an HTTPRoute parentRef attaches to, as the Gateway API defines
 * attachment for status (`attachedRoutes`, a route's parent conditions): the parentRef names the
 * Gateway (and, with `sectionName` / `port`, the listener), and the listener's `allowedRoutes`
 * takes HTTPRoutes from the route's namespace. A listener's own validity does not count here (the
 * spec counts routes attached to a listener that is not Accepted); `from: Selector` attaches
 * nothing because Namespace labels are not read (gateway-listeners.ts refuses that listener).
 */
import type { Gateway, Listener, ParentReference } from './objects.js';

/** The Gateway API group, the default of parentRefs and route kinds. */
export const GATEWAY_API_GROUP = 'gateway.networking.k8s.io';

/** A route kind as listener status names it. */
export interface RouteGroupKind {
  readonly group: string;
  readonly kind: string;
}

const HTTP_ROUTE_KIND: RouteGroupKind = { group: GATEWAY_API_GROUP, kind: 'HTTPRoute' };

/** `namespace/name` of a Gateway, the key parentRefs are resolved by. */
export function gatewayKey(gateway: Gateway): string {
  return `${gateway.metadata.namespace ?? 'default'}/${gateway.metadata.name}`;
}

/** `namespace/name` of the Gateway `parent` names from a route in `routeNamespace` (undefined: not a Gateway). */
export function parentGatewayKey(parent: ParentReference, routeNamespace: string): string | undefined {
  if ((parent.group ?? GATEWAY_API_GROUP) !== GATEWAY_API_GROUP || (parent.kind ?? 'Gateway') !== 'Gateway')
    return undefined;
  return `${parent.namespace ?? routeNamespace}/${parent.name}`;
}

/**
 * The route kinds `listener` supports: HTTPRoute on an HTTP or HTTPS listener whose
 * `allowedRoutes.kinds` is empty or names it; none otherwise.
 */
export function supportedKinds(listener: Listener): RouteGroupKind[] {
  if (listener.protocol !== 'HTTP' && listener.protocol !== 'HTTPS') return [];
  const kinds = listener.allowedRoutes?.kinds;
  if (kinds === undefined || kinds.length === 0) return [HTTP_ROUTE_KIND];
  return kinds.some(
    (kind) => kind.kind === 'HTTPRoute' && (kind.group ?? GATEWAY_API_GROUP) === GATEWAY_API_GROUP,
  )
    ? [HTTP_ROUTE_KIND]
    : [];
}

/** The kinds of `listener`'s `allowedRoutes.kinds` that are not HTTPRoute (refused: InvalidRouteKinds). */
export function unsupportedKinds(listener: Listener): string[] {
  return (listener.allowedRoutes?.kinds ?? [])
    .filter((kind) => kind.kind !== 'HTTPRoute' || (kind.group ?? GATEWAY_API_GROUP) !== GATEWAY_API_GROUP)
    .map((kind) => `${kind.group ?? GATEWAY_API_GROUP}/${kind.kind}`);
}

/** Whether `parent`'s sectionName and port select `listener` (either unset selects every listener). */
export function parentSelects(parent: ParentReference, listener: Listener): boolean {
  return (
    (parent.sectionName === undefined || parent.sectionName === listener.name) &&
    (parent.port === undefined || parent.port === listener.port)
  );
}

/** Whether `listener` of `gateway` takes HTTPRoutes from `routeNamespace` (allowedRoutes kinds and namespaces). */
export function listenerAllows(gateway: Gateway, listener: Listener, routeNamespace: string): boolean {
  if (supportedKinds(listener).length === 0) return false;
  const from = listener.allowedRoutes?.namespaces?.from ?? 'Same';
  if (from === 'All') return true;
  if (from === 'Same') return (gateway.metadata.namespace ?? 'default') === routeNamespace;
  return false;
}

/** Whether `parent` (of a route in `routeNamespace`) attaches the route to `listener` of `gateway`. */
export function attaches(
  parent: ParentReference,
  routeNamespace: string,
  gateway: Gateway,
  listener: Listener,
): boolean {
  return (
    parentGatewayKey(parent, routeNamespace) === gatewayKey(gateway) &&
    parentSelects(parent, listener) &&
    listenerAllows(gateway, listener, routeNamespace)
  );
}

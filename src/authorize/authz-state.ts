import type { IR, IRRoute, IRVirtualHost } from '../ir/types.js';
import { sortedChanges } from '../shared/sorted-changes.js';
import { IdentityMemo } from '../shared/identity-memo.js';
import { compilePolicy, type CompiledPolicy } from './policy/compile-policy.js';

/** Compiled routes by IR route: translate hands an unchanged route the same object on a reload. */
const compiledRoutes = new IdentityMemo<IRRoute, RouteAuthz>();

/** Everything authorize knows about one route, compiled once per config version. */
export interface RouteAuthz {
  readonly id: string;
  readonly public: boolean;
  readonly passIdentityHeaders: boolean;
  readonly policy: CompiledPolicy;
}

/**
 * The immutable authorization state for one config version. A reload builds a new one and swaps
 * the reference, so an in-flight Check finishes on the state it started with.
 */
export interface AuthzState {
  readonly routes: ReadonlyMap<string, RouteAuthz>;
  /** `jwt_claims_headers` as [header name (lower case), claim name] pairs. */
  readonly claimHeaders: readonly (readonly [string, string])[];
  readonly authenticateUrl: string | undefined;
  readonly cookieName: string;
  /** The JWKS served at /.well-known/portcullis/jwks.json on every route host (undefined: none). */
  readonly jwksJson: string | undefined;
}

/** An IR and the state built from it: what the next build can start from. */
export interface BuiltAuthzState {
  readonly ir: IR;
  readonly state: AuthzState;
}

/**
 * Compiles every route's policy from the IR (no parsing or I/O happens per request after this).
 * Routes whose IR object is unchanged since an earlier build reuse their compiled policy. Given
 * the previous build, only the virtual hosts that changed (translate hands unchanged ones on as
 * the same objects) are applied to a copy of its routes map.
 */
export function buildAuthzState(ir: IR, previous?: BuiltAuthzState): AuthzState {
  const routes = (previous === undefined ? undefined : changedRoutes(previous, ir)) ?? allRoutes(ir);
  return {
    routes,
    claimHeaders: Object.entries(ir.authorize.claimHeaders).map(
      ([header, claim]) => [header.toLowerCase(), claim] as const,
    ),
    authenticateUrl: ir.authorize.authenticateUrl,
    cookieName: ir.authorize.cookieName,
    jwksJson: ir.internal?.jwksJson,
  };
}

function compiled(route: IRRoute): RouteAuthz {
  return compiledRoutes.get(route, '', () => ({
    id: route.id,
    public: route.public,
    passIdentityHeaders: route.passIdentityHeaders,
    policy: compilePolicy(route.policy),
  }));
}

function allRoutes(ir: IR): Map<string, RouteAuthz> {
  const routes = new Map<string, RouteAuthz>();
  for (const vhost of ir.virtualHosts)
    for (const route of vhost.routes) routes.set(route.id, compiled(route));
  return routes;
}

/**
 * At most this many virtual hosts may leave or arrive for the incremental path: it copies the
 * previous map and edits it per change, which for a change of most hosts (a cold rebuild) costs
 * more than building the map afresh.
 */
const MAX_CHANGED_HOSTS = 256;

/** The previous routes map with the changed virtual hosts applied; undefined: build in full. */
function changedRoutes(previous: BuiltAuthzState, ir: IR): Map<string, RouteAuthz> | undefined {
  // Virtual hosts are sorted by name but for the catch-all, always last: compare it on its own.
  const [before, beforeLast] = splitUnsortedLast(previous.ir.virtualHosts);
  const [after, afterLast] = splitUnsortedLast(ir.virtualHosts);
  const changes = sortedChanges(before, after, () => false, MAX_CHANGED_HOSTS);
  if (changes === undefined) return undefined;
  const removed = [...changes.removed];
  const added = [...changes.added];
  if (beforeLast !== afterLast) {
    if (beforeLast !== undefined) removed.push(beforeLast);
    if (afterLast !== undefined) added.push(afterLast);
  }
  const routes = new Map(previous.state.routes);
  for (const vhost of removed) for (const route of vhost.routes) routes.delete(route.id);
  for (const vhost of added) for (const route of vhost.routes) routes.set(route.id, compiled(route));
  return routes;
}

/** `hosts` without a last host that is out of name order (the catch-all), and that host. */
function splitUnsortedLast(
  hosts: readonly IRVirtualHost[],
): [readonly IRVirtualHost[], IRVirtualHost | undefined] {
  const last = hosts[hosts.length - 1];
  const before = hosts[hosts.length - 2];
  return last !== undefined && before !== undefined && !(last.name > before.name)
    ? [hosts.slice(0, -1), last]
    : [hosts, undefined];
}

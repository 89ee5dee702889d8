import { claimHeaderKey, decisionClaimHeaders, decisionCookieName } from '../contract/fast-path.js';
import { fewChanges } from '../shared/few-changes.js';
import type { IR, IRVirtualHost } from '../ir/types.js';
import type { DecisionCookieSettings } from './fast-path/decision-cookie.js';
import { compilePolicy, type CompiledPolicy } from './policy/compile-policy.js';
import { routeTokenHeaders, type RouteTokenHeaders } from './identity/token-headers.js';

/** Everything authorize knows about one route, compiled once per config version. */
export interface RouteAuthz {
  readonly id: string;
  readonly public: boolean;
  readonly passIdentityHeaders: boolean;
  readonly policy: CompiledPolicy;
  /** The identity-provider client of the route; a session made by another client counts as none. */
  readonly idpId: string;
  /** Set when Envoy may replay this route's allows (the fast path is on, `IRRoute.decisionName`). */
  readonly decision: RouteDecision | undefined;
  /** The request headers filled from the session on each allow (`IRRoute.requestHeaderTemplates`). */
  readonly tokenHeaders?: RouteTokenHeaders;
}

/** What a replayable route's allow hands out: the decision token names its host's allowed routes. */
export interface RouteDecision {
  /** `IRRoute.decisionName`: the name decision tokens list the route under. */
  readonly name: string;
  /** Every replayable route of the same IR virtual host, in config order (this one included). */
  readonly hostRoutes: readonly RouteAuthz[];
}

/** One IR virtual host's entries, in config order, with the content key of each route's policy. */
export interface HostAuthz {
  /** The IR virtual host the entries were built from (compared by identity). */
  readonly vhost: IRVirtualHost;
  readonly routes: readonly RouteAuthz[];
  /** `JSON.stringify(route.policy)` of each route, in the same order: the keys of `AuthzState.policies`. */
  readonly policyKeys: readonly string[];
}

/** The fast path of one config (docs/fast-path.md): how decision tokens are minted and set. */
export interface FastPathSettings {
  /** `decision_token_lifetime`, ms (always > 0 here). */
  readonly lifetimeMs: number;
  readonly cookie: DecisionCookieSettings;
  /**
   * The claim headers as [`claimHeaderKey(i)`, claim], `i` indexing the sorted lower-cased header
   * names: the keys of the token's `h`, which the compiled filters turn back into headers.
   */
  readonly claimHeaders: readonly (readonly [string, string])[];
}

/**
 * The immutable authorization state for one config version. A reload builds a new one and swaps
 * the reference, so an in-flight Check finishes on the state it started with.
 */
export interface AuthzState {
  /** The IR this state was built from (compared by identity with `HostChanges.base`). */
  readonly ir: IR;
  readonly routes: ReadonlyMap<string, RouteAuthz>;
  /**
   * Each IR virtual host of this config (the object itself) with its routes' entries: what the
   * next build reuses for a host it hands over unchanged (the same object), so a reload compiles
   * and serialises only the hosts it changed.
   */
  readonly hosts: readonly HostAuthz[];
  /** Each distinct policy of this config, compiled, by its content (JSON): what the next build reuses. */
  readonly policies: ReadonlyMap<string, CompiledPolicy>;
  /** How many routes use each policy of `policies`: a patched state drops a policy at 0 (see `buildAuthzState`). */
  readonly policyUses: ReadonlyMap<string, number>;
  /** `jwt_claims_headers` as [header name (lower case), claim name] pairs. */
  readonly claimHeaders: readonly (readonly [string, string])[];
  readonly authenticateUrl: string | undefined;
  /**
   * The authenticate host name (lower case, no port) when sign-in is configured: every path of it
   * is Portcullis's own, so Checks for it are allowed through to the HTTP server.
   */
  readonly authenticateHost: string | undefined;
  readonly cookieName: string;
  /** `jwt_issuer_format`: the assertion's `iss` is the host (`host_only`) or `<scheme>://<host>/` (`uri`). */
  readonly issuerFormat: 'host_only' | 'uri';
  /** The JWKS served at /.well-known/portcullis/jwks.json on every route host (undefined: none). */
  readonly jwksJson: string | undefined;
  /** Undefined when the fast path is off (`decision_token_lifetime` 0): no token is minted. */
  readonly fastPath: FastPathSettings | undefined;
}

/**
 * The virtual hosts a build changed, added or removed (by name) relative to the IR `base`
 * (runtime's `BuildChanges`, which this folder cannot import): every other host of the new IR is
 * the very object `base` holds.
 */
export interface HostChanges {
  readonly base: IR;
  readonly virtualHosts: ReadonlySet<string>;
}

/**
 * Compiles every route's policy from the IR into plain functions, once per config version, so no
 * parsing or I/O happens per request after this. A function of `ir` alone: `previous` (the last
 * state built) only lends what it built, so the result is exactly what a build from scratch
 * gives. A virtual host that is the very object `previous` was built from (the pipeline hands
 * back unchanged hosts as they were) keeps its entries as they are, unless the fast path was
 * turned on or off (that changes every entry); a changed host's routes take their compiled policy
 * from `previous` by the policy's content (its JSON), so only new policies are compiled. So a
 * reload that changes one route costs that route plus a pass over the hosts (two Map inserts
 * per route).
 *
 * With `changes` whose `base` is the IR `previous` was built from, the state is `previous`'s maps
 * copied and patched for the named hosts only (`patchedState`), so a one-route reload costs a
 * copy of the maps, not a rebuild; the result equals the full build except for the maps'
 * iteration order, which nothing reads (the maps are only looked up).
 */
export function buildAuthzState(ir: IR, previous?: AuthzState, changes?: HostChanges): AuthzState {
  const fastPath = fastPathSettings(ir);
  if (
    previous !== undefined &&
    changes !== undefined &&
    changes.base === previous.ir &&
    fewChanges(changes.virtualHosts.size, previous.hosts.length) &&
    (previous.fastPath === undefined) === (fastPath === undefined)
  ) {
    const patched = patchedState(previous, changes.virtualHosts, ir.virtualHosts, fastPath !== undefined);
    if (patched !== undefined) return { ...settingsOf(ir, fastPath), ...patched };
  }
  const routes = new Map<string, RouteAuthz>();
  const policies = new Map<string, CompiledPolicy>();
  const policyUses = new Map<string, number>();
  const hosts: HostAuthz[] = [];
  const reusable =
    previous !== undefined && (previous.fastPath === undefined) === (fastPath === undefined)
      ? hostFinder(previous.hosts)
      : undefined;
  for (const [index, vhost] of ir.virtualHosts.entries()) {
    const host =
      reusable?.(vhost, index) ?? hostAuthz(vhost, fastPath !== undefined, policies, previous?.policies);
    hosts.push(host);
    const { routes: entries, policyKeys } = host;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i] as RouteAuthz;
      const key = policyKeys[i] as string;
      routes.set(entry.id, entry);
      policies.set(key, entry.policy);
      policyUses.set(key, (policyUses.get(key) ?? 0) + 1);
    }
  }
  return { ...settingsOf(ir, fastPath), routes, hosts, policies, policyUses };
}

/** The parts of a state that are functions of the IR's settings alone (no host). */
function settingsOf(
  ir: IR,
  fastPath: FastPathSettings | undefined,
): Omit<AuthzState, 'routes' | 'hosts' | 'policies' | 'policyUses'> {
  return {
    ir,
    claimHeaders: Object.entries(ir.authorize.claimHeaders).map(
      ([header, claim]) => [header.toLowerCase(), claim] as const,
    ),
    authenticateUrl: ir.authorize.authenticateUrl,
    authenticateHost:
      ir.authorize.authenticateUrl === undefined
        ? undefined
        : new URL(ir.authorize.authenticateUrl).hostname.toLowerCase(),
    cookieName: ir.authorize.cookieName,
    issuerFormat: ir.authorize.issuerFormat,
    jwksJson: ir.internal?.jwksJson,
    fastPath,
  };
}

/**
 * `previous`'s hosts, routes and policies with the hosts named in `names` rebuilt from `vhosts`
 * (the new IR's hosts, the others `previous`'s very objects in the same relative order) and the
 * named hosts `vhosts` lacks dropped: the cost of copying the maps plus the named hosts. A policy
 * goes with its last route (`policyUses`). Undefined (build in full) when the patch could not be
 * exact: a route id two routes share (the full build keeps the last one's entry) or a host not
 * named that is not `previous`'s own.
 */
function patchedState(
  previous: AuthzState,
  names: ReadonlySet<string>,
  vhosts: readonly IRVirtualHost[],
  replayOn: boolean,
): Pick<AuthzState, 'routes' | 'hosts' | 'policies' | 'policyUses'> | undefined {
  let previousCount = 0;
  for (const host of previous.hosts) previousCount += host.routes.length;
  if (previousCount !== previous.routes.size) return undefined;
  const routes = new Map(previous.routes);
  const policies = new Map(previous.policies);
  const policyUses = new Map(previous.policyUses);
  for (const host of previous.hosts) {
    if (!names.has(host.vhost.name)) continue;
    for (const [i, entry] of host.routes.entries()) {
      routes.delete(entry.id);
      const key = host.policyKeys[i] as string;
      const uses = (policyUses.get(key) ?? 0) - 1;
      if (uses > 0) policyUses.set(key, uses);
      else {
        policyUses.delete(key);
        policies.delete(key);
      }
    }
  }
  const hosts: HostAuthz[] = [];
  let next = 0;
  for (const vhost of vhosts) {
    if (!names.has(vhost.name)) {
      while (next < previous.hosts.length && names.has((previous.hosts[next] as HostAuthz).vhost.name))
        next++;
      const host = previous.hosts[next++];
      if (host?.vhost !== vhost) return undefined;
      hosts.push(host);
      continue;
    }
    const host = hostAuthz(vhost, replayOn, policies, previous.policies);
    hosts.push(host);
    for (const [i, entry] of host.routes.entries()) {
      if (routes.has(entry.id)) return undefined;
      routes.set(entry.id, entry);
      const key = host.policyKeys[i] as string;
      policyUses.set(key, (policyUses.get(key) ?? 0) + 1);
    }
  }
  return { routes, hosts, policies, policyUses };
}

/**
 * The entries of one virtual host's routes: each policy taken from `built` (this state's, so far;
 * the host's own are added to it) or `lent` (the previous state's) by its content, or compiled.
 */
function hostAuthz(
  vhost: IRVirtualHost,
  replayOn: boolean,
  built: Map<string, CompiledPolicy>,
  lent: ReadonlyMap<string, CompiledPolicy> | undefined,
): HostAuthz {
  // Filled while the host's routes are built; every replayable route of the host shares it.
  const hostRoutes: RouteAuthz[] = [];
  const routes: RouteAuthz[] = [];
  const policyKeys: string[] = [];
  for (const route of vhost.routes) {
    const key = JSON.stringify(route.policy);
    const policy = built.get(key) ?? lent?.get(key) ?? compilePolicy(route.policy);
    built.set(key, policy);
    const replayable = replayOn && route.decisionName !== undefined;
    const tokenHeaders = routeTokenHeaders(route.sourcePath, route.requestHeaderTemplates);
    const entry: RouteAuthz = {
      id: route.id,
      public: route.public,
      passIdentityHeaders: route.passIdentityHeaders,
      policy,
      idpId: route.idpId,
      decision: replayable ? { name: route.decisionName, hostRoutes } : undefined,
      ...(tokenHeaders === undefined ? {} : { tokenHeaders }),
    };
    if (replayable) hostRoutes.push(entry);
    routes.push(entry);
    policyKeys.push(key);
  }
  return { vhost, routes, policyKeys };
}

/**
 * Finds the entry of a virtual host object among `hosts`: at the same place first (a reload
 * mostly keeps the order), else through an index by object built on the first miss.
 */
export function hostFinder(
  hosts: readonly HostAuthz[],
): (vhost: IRVirtualHost, index: number) => HostAuthz | undefined {
  let byObject: Map<IRVirtualHost, HostAuthz> | undefined;
  return (vhost, index) => {
    const there = hosts[index];
    if (there?.vhost === vhost) return there;
    byObject ??= new Map(hosts.map((host) => [host.vhost, host]));
    return byObject.get(vhost);
  };
}

/**
 * The fast path's settings, or undefined when `decision_token_lifetime` is 0. The cookie follows
 * the session cookie's Secure and SameSite (`signIn.cookie`); without sign-in settings, Secure
 * unless the listener is plain HTTP, and SameSite Lax (the session cookie's default).
 */
function fastPathSettings(ir: IR): FastPathSettings | undefined {
  const lifetimeMs = ir.authorize.decisionTokenLifetimeMs;
  if (!(lifetimeMs > 0)) return undefined;
  const session = ir.signIn?.cookie;
  // The claim of each header as the slow path sends it: of names that differ only in case, the
  // last one set wins (Envoy overwrites the earlier).
  const claimOf = new Map(
    Object.entries(ir.authorize.claimHeaders).map(
      ([header, claim]) => [header.toLowerCase(), claim] as const,
    ),
  );
  const headers = decisionClaimHeaders(ir.authorize.claimHeaders).map(
    (header) => [header, claimOf.get(header) ?? ''] as const,
  );
  return {
    lifetimeMs,
    cookie: {
      name: decisionCookieName(ir.authorize.cookieName),
      secure: session?.secure ?? ir.listener.tls !== undefined,
      sameSite: session?.sameSite ?? 'lax',
    },
    claimHeaders: headers.map(([, claim], index) => [claimHeaderKey(index), claim] as const),
  };
}

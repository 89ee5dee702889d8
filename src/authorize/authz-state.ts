import type { IR } from '../ir/types.js';
import { compilePolicy, type CompiledPolicy } from './policy/compile-policy.js';

/** Everything authorize knows about one route, compiled once per config version. */
export interface RouteAuthz {
  readonly id: string;
  readonly public: boolean;
  readonly passIdentityHeaders: boolean;
  readonly policy: CompiledPolicy;
  /** The identity-provider client of the route; a session made by another client counts as none. */
  readonly idpId: string;
}

/**
 * The immutable authorization state for one config version. A reload builds a new one and swaps
 * the reference, so an in-flight Check finishes on the state it started with.
 */
export interface AuthzState {
  readonly routes: ReadonlyMap<string, RouteAuthz>;
  /** Each distinct policy of this config, compiled, by its content (JSON): what the next build reuses. */
  readonly policies: ReadonlyMap<string, CompiledPolicy>;
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
}

/**
 * Compiles every route's policy from the IR into plain functions, once per config version, so no
 * parsing or I/O happens per request after this. A function of `ir` alone: `previous` (the last
 * state built) only lends its compiled policies, looked up by the policy's content (its JSON), so
 * a reload that leaves most routes alone compiles only the changed ones, and the result is exactly
 * what a build from scratch gives.
 */
export function buildAuthzState(ir: IR, previous?: AuthzState): AuthzState {
  const routes = new Map<string, RouteAuthz>();
  const policies = new Map<string, CompiledPolicy>();
  for (const vhost of ir.virtualHosts) {
    for (const route of vhost.routes) {
      const key = JSON.stringify(route.policy);
      const policy = policies.get(key) ?? previous?.policies.get(key) ?? compilePolicy(route.policy);
      policies.set(key, policy);
      routes.set(route.id, {
        id: route.id,
        public: route.public,
        passIdentityHeaders: route.passIdentityHeaders,
        policy,
        idpId: route.idpId,
      });
    }
  }
  return {
    routes,
    policies,
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
  };
}

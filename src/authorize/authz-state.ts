import type { IR, IRRoute } from '../ir/types.js';
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

/**
 * Compiles every route's policy from the IR (no parsing or I/O happens per request after this).
 * Routes whose IR object is unchanged since an earlier build reuse their compiled policy.
 */
export function buildAuthzState(ir: IR): AuthzState {
  const routes = new Map<string, RouteAuthz>();
  for (const vhost of ir.virtualHosts) {
    for (const route of vhost.routes) {
      routes.set(
        route.id,
        compiledRoutes.get(route, '', () => ({
          id: route.id,
          public: route.public,
          passIdentityHeaders: route.passIdentityHeaders,
          policy: compilePolicy(route.policy),
        })),
      );
    }
  }
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

/**
 * What Envoy's ext_authz filter, the compiled routes and the authorize service must agree on:
 * the per-route context extension that names the route, and the header and cookie names Portcullis
 * owns. Both sides import this module; nothing else spells these strings.
 */

/** ext_authz per-route context extension carrying the route id (16 hex characters). */
export const CONTEXT_ROUTE_ID = 'route_id';

/** Context extensions for one route, as the compiler writes them. */
export function encodeRouteContext(routeId: string): Record<string, string> {
  return { [CONTEXT_ROUTE_ID]: routeId };
}

/** The route id from a CheckRequest's context extensions, or undefined when absent or malformed. */
export function decodeRouteContext(
  extensions: Readonly<Record<string, string>> | undefined,
): string | undefined {
  const id = extensions?.[CONTEXT_ROUTE_ID];
  return id !== undefined && /^[0-9a-f]{16}$/.test(id) ? id : undefined;
}

/** The signed identity assertion sent to upstreams when `pass_identity_headers` is on. */
export const ASSERTION_HEADER = 'x-portcullis-jwt-assertion';

/** Prefix of the per-claim headers (`X-Portcullis-Claim-Email`). */
export const CLAIM_HEADER_PREFIX = 'x-portcullis-claim-';

/** Every request header starting with this is Portcullis's own; client-supplied ones are stripped. */
export const RESERVED_HEADER_PREFIX = 'x-portcullis-';

/** The session cookie: it holds only a handle to a server-side session. */
export const SESSION_COOKIE = '_portcullis';

/** `Authorization: Portcullis <token>` carries a session for programmatic clients. */
export const AUTHORIZATION_SCHEME = 'Portcullis';

/** Path of the JWKS that upstreams use to verify assertions, served on every route host. */
export const JWKS_PATH = '/.well-known/portcullis/jwks.json';

import type { AuthorizeRequest } from './decision.js';

/** Characters that cannot appear in an `:authority` Envoy accepted (a path, query, userinfo, space). */
const NOT_IN_AUTHORITY = /[\s/?#@\\]/;

/**
 * Whether a Check describes a request Envoy could have sent: a method of letters, a scheme Envoy
 * uses (or none), a host the WHATWG URL parser takes as an authority, and a path that starts with
 * `/` (a CONNECT names no path). Envoy validates all of these before ext_authz, so a Check that
 * fails here comes from a broken or hostile caller: the authorizer answers 400 instead of sending
 * it to sign in with a host it cannot build a URL from, or failing on it later.
 */
export function isWellFormed(request: AuthorizeRequest): boolean {
  const { method, scheme, host, path } = request;
  if (!/^[A-Za-z]+$/.test(method)) return false;
  if (scheme !== '' && scheme !== 'http' && scheme !== 'https') return false;
  if (host === '' || NOT_IN_AUTHORITY.test(host) || !URL.canParse(`http://${host}/`)) return false;
  return path.startsWith('/') || (path === '' && method.toUpperCase() === 'CONNECT');
}

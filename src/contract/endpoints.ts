/**
 * Portcullis's own HTTP endpoints: the paths and query parameters that the authorize service
 * (which sends browsers to sign in), the compiled Envoy routes (which send these paths to
 * Portcullis's HTTP server) and the authenticate service (which answers them) must agree on.
 * Nothing else spells these strings. Names follow the peer's (`pomerium_*` -> `portcullis_*`).
 */

/** Every path under this prefix, on every route host, is answered by Portcullis itself. */
export const OWN_PATH_PREFIX = '/.portcullis/';

/** On the authenticate host: starts (or, with a session, completes) a sign-in. */
export const SIGN_IN_PATH = '/.portcullis/sign_in';
/** On every host: sign-out, GET or POST, with the CSRF token. */
export const SIGN_OUT_PATH = '/.portcullis/sign_out';
/** On the authenticate host: where the IdP sends the browser after RP-initiated logout. */
export const SIGNED_OUT_PATH = '/.portcullis/signed_out';
/** On route hosts: receives the sign-in handoff and sets the route host's session cookie. */
export const HANDOFF_PATH = '/.portcullis/callback';
/** On every host: the user page (HTML). */
export const USER_PAGE_PATH = '/.portcullis/';
/** On every host: the user page as JSON. */
export const USER_JSON_PATH = '/.portcullis/user';
/** On route hosts: programmatic login; answers a sign-in URL as text. */
export const PROGRAMMATIC_LOGIN_PATH = '/.portcullis/api/v1/login';

/** Query parameter: the URL to return to after sign-in (or sign-out). */
export const REDIRECT_URI_PARAM = 'portcullis_redirect_uri';
/** Query parameter: the session token handed to a programmatic client's redirect URI. */
export const JWT_PARAM = 'portcullis_jwt';
/** Query parameter: the sealed handoff from the authenticate host to a route host. */
export const HANDOFF_PARAM = 'portcullis_handoff';
/** Query or form parameter: the sign-out CSRF token. */
export const CSRF_PARAM = 'portcullis_csrf';
/** Query parameter: the sealed programmatic-login request carried through sign-in. */
export const PROGRAMMATIC_PARAM = 'portcullis_programmatic';

/**
 * Request header set by ext_authz on requests to Portcullis's own endpoints (never on a route to an
 * upstream): the session handle the request carried (cookie or `Authorization: Portcullis`),
 * since the credential strip removes those before the router. Client-sent copies are removed by
 * the identity strip (it is under `x-portcullis-`). The HTTP server verifies it like a cookie.
 */
export const OWN_SESSION_HEADER = 'x-portcullis-session-handle';

/**
 * Where authorize sends a browser that needs to sign in: the authenticate service's sign-in page
 * carrying the original URL (scheme, host, port, path and query as the browser asked).
 */
export function signInLocation(authenticateUrl: string, originalUrl: string): string {
  const target = new URL(SIGN_IN_PATH, authenticateUrl);
  target.searchParams.set(REDIRECT_URI_PARAM, originalUrl);
  return target.href;
}

/**
 * The request headers other software reads as "who the caller is": a client that sends them
 * through Portcullis could claim any identity to an upstream that trusts them (behind a Kubernetes
 * API server, `Impersonate-User: system:admin` is a grant). Envoy removes every one of them from
 * every request before any route is taken (src/xds/compile/identity-strip.ts), unless a route
 * names it in `pass_request_identity_headers`; config validation accepts only names this list
 * covers. One list, read by both.
 *
 * All names are lower case, as Envoy holds header names (HTTP/2 and HTTP/1.1 alike).
 */

/** Whole names: oauth2-proxy's and similar proxies' user headers, Apache-style `Remote-User`. */
export const IDENTITY_HEADER_NAMES: readonly string[] = [
  'remote-user',
  'x-forwarded-access-token',
  'x-forwarded-email',
  'x-forwarded-groups',
  'x-forwarded-preferred-username',
  'x-forwarded-user',
  'x-remote-group',
  'x-remote-user',
];

/**
 * Prefixes: Kubernetes impersonation (`Impersonate-User`, `-Group`, `-Uid`, `-Extra-*`),
 * oauth2-proxy's `X-Auth-Request-*` and Kubernetes front-proxy extras (`X-Remote-Extra-*`).
 */
export const IDENTITY_HEADER_PREFIXES: readonly string[] = [
  'impersonate-',
  'x-auth-request-',
  'x-remote-extra-',
];

/** Whether `name` (any letter case) is an identity header Envoy strips unless a route passes it. */
export function isIdentityHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return (
    IDENTITY_HEADER_NAMES.includes(lower) ||
    IDENTITY_HEADER_PREFIXES.some((prefix) => lower.startsWith(prefix))
  );
}

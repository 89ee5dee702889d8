import { parseCookie, stringifyCookie } from 'cookie';

/** RFC 6265 section 4.1.1 cookie-value characters (what `stringifyCookie` accepts unencoded). */
const COOKIE_OCTETS = /^("?)[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*\1$/;

/** A request's Cookie header split into the session cookie and everything else. */
export interface CookieSplit {
  /** The session cookie's raw value (the session handle), undefined when absent or empty. */
  readonly session: string | undefined;
  /** Whether the header named the session cookie at all (even with an empty value). */
  readonly hadSession: boolean;
  /** The Cookie header to forward upstream without the session cookie; undefined when none is left. */
  readonly others: string | undefined;
}

/**
 * Reads a request's `Cookie` header with the `cookie` library: the session cookie `name` (its raw
 * value, as issued: a handle is base64url, so nothing to decode) and the header rebuilt without
 * it, since the session credential must never reach an upstream. Values are kept byte for byte;
 * one that RFC 6265 does not allow in a Cookie header (a browser may still send it) is forwarded
 * percent-encoded rather than dropped. When a name repeats, the first value wins, as in the
 * library's parse and in most servers. Envoy's strip of the session cookie on every request
 * (src/xds/compile/identity-strip.ts) finds it by these same rules; test/support/cookie-vectors.ts
 * is the table both are tested against.
 */
export function splitSessionCookie(header: string | undefined, name: string): CookieSplit {
  if (header === undefined || header === '')
    return { session: undefined, hadSession: false, others: undefined };
  const cookies = parseCookie(header, { decode: (value) => value });
  const hadSession = Object.hasOwn(cookies, name);
  const session = cookies[name] === '' ? undefined : cookies[name];
  delete cookies[name];
  const others = Object.entries(cookies)
    .map(([key, value]) => forwardedCookie(key, value ?? ''))
    .join('; ');
  return { session, hadSession, others: others === '' ? undefined : others };
}

/**
 * Every value a Cookie header gives the cookie `name`, in order, by the `cookie` library's rules
 * (each `;`-separated pair parsed on its own, since the library keeps only a name's first value).
 * Two different values mean two cookies of that name reached the request, such as one set by a
 * sibling subdomain next to this host's own (cookie tossing): the authorizer refuses those rather
 * than pick one (src/authorize/request-credentials.ts).
 */
export function cookieValues(header: string | undefined, name: string): string[] {
  if (header === undefined || header === '') return [];
  return header.split(';').flatMap((pair) => {
    const cookies = parseCookie(pair, { decode: (value) => value });
    return Object.hasOwn(cookies, name) ? [cookies[name] ?? ''] : [];
  });
}

/**
 * One cookie as forwarded: through `stringifyCookie`, or, for a name it refuses (a space, a
 * non-ASCII letter, an empty name: all things a client can send and the parse accepts), as the
 * client wrote it, which Envoy has already accepted in a header. Never a throw: a strange cookie
 * beside the session cookie must not fail the request.
 */
function forwardedCookie(name: string, value: string): string {
  try {
    return stringifyCookie(
      { [name]: value },
      { encode: (raw) => (COOKIE_OCTETS.test(raw) ? raw : encodeURIComponent(raw)) },
    );
  } catch {
    return `${name}=${value}`;
  }
}

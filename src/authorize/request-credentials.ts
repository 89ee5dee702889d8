import { AUTHORIZATION_SCHEME } from '../contract/authz.js';
import { cookieValues, splitSessionCookie } from '../session/cookie.js';

/** Where a request's session handle came from, and what is left of its headers without it. */
export interface RequestCredentials {
  readonly handle: string | undefined;
  /** The Cookie header without the session cookie; undefined when nothing else remains. */
  readonly cookieWithoutSession: string | undefined;
  readonly hadSessionCookie: boolean;
  readonly hadPortcullisAuthorization: boolean;
  /**
   * The request carries two different session credentials: session cookies with different values,
   * or a session cookie and an `Authorization: Portcullis` token that differs from it. Picking one
   * would let a cookie tossed from a sibling subdomain decide whose session the request runs as,
   * so the authorizer refuses the request (400) instead.
   */
  readonly conflicting: boolean;
}

/**
 * Reads the session handle from the session cookie, or from `Authorization: Portcullis <token>`
 * (programmatic clients); when both are present they must agree (else `conflicting`). Also works
 * out the Cookie header to forward upstream, since the session cookie must never reach an upstream
 * (`splitSessionCookie`).
 */
export function readCredentials(
  headers: Readonly<Record<string, string>>,
  cookieName: string,
): RequestCredentials {
  const cookies = splitSessionCookie(headers.cookie, cookieName);
  const cookieHandles = cookies.hadSession ? new Set(cookieValues(headers.cookie, cookieName)) : new Set();
  const authorization = headers.authorization;
  const prefix = `${AUTHORIZATION_SCHEME} `;
  const hadPortcullisAuthorization = authorization !== undefined && authorization.startsWith(prefix);
  const token = hadPortcullisAuthorization ? authorization.slice(prefix.length).trim() : undefined;
  const conflicting =
    cookieHandles.size > 1 || (cookies.hadSession && token !== undefined && !cookieHandles.has(token));
  return {
    handle: cookies.session ?? token,
    cookieWithoutSession: cookies.others,
    hadSessionCookie: cookies.hadSession,
    hadPortcullisAuthorization,
    conflicting,
  };
}

import { AUTHORIZATION_SCHEME } from '../contract/authz.js';
import { splitSessionCookie } from '../session/cookie.js';

/** Where a request's session handle came from, and what is left of its headers without it. */
export interface RequestCredentials {
  readonly handle: string | undefined;
  /** The Cookie header without the session cookie; undefined when nothing else remains. */
  readonly cookieWithoutSession: string | undefined;
  readonly hadSessionCookie: boolean;
  readonly hadPortcullisAuthorization: boolean;
}

/**
 * Reads the session handle from the session cookie, or from `Authorization: Portcullis <token>`
 * (programmatic clients). The cookie wins when both are present. Also works out the Cookie header
 * to forward upstream, since the session cookie must never reach an upstream (`splitSessionCookie`).
 */
export function readCredentials(
  headers: Readonly<Record<string, string>>,
  cookieName: string,
): RequestCredentials {
  const cookies = splitSessionCookie(headers.cookie, cookieName);
  let handle = cookies.session;
  const hadSessionCookie = cookies.hadSession;
  const cookieWithoutSession = cookies.others;
  const authorization = headers.authorization;
  const prefix = `${AUTHORIZATION_SCHEME} `;
  const hadPortcullisAuthorization = authorization !== undefined && authorization.startsWith(prefix);
  if (hadPortcullisAuthorization) handle ??= authorization.slice(prefix.length).trim();
  return { handle, cookieWithoutSession, hadSessionCookie, hadPortcullisAuthorization };
}

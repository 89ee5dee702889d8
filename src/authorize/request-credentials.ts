import { AUTHORIZATION_SCHEME } from '../contract/authz.js';

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
 * to forward upstream, since the session cookie must never reach an upstream.
 */
export function readCredentials(
  headers: Readonly<Record<string, string>>,
  cookieName: string,
): RequestCredentials {
  let handle: string | undefined;
  let hadSessionCookie = false;
  let cookieWithoutSession: string | undefined;
  const cookie = headers.cookie;
  if (cookie !== undefined) {
    const kept: string[] = [];
    for (const part of cookie.split(/;\s*/)) {
      const eq = part.indexOf('=');
      const name = eq < 0 ? part : part.slice(0, eq);
      if (name.trim() === cookieName) {
        hadSessionCookie = true;
        handle ??= part.slice(eq + 1).trim();
      } else if (part !== '') {
        kept.push(part);
      }
    }
    cookieWithoutSession = kept.length > 0 ? kept.join('; ') : undefined;
  }
  const authorization = headers.authorization;
  const prefix = `${AUTHORIZATION_SCHEME} `;
  const hadPortcullisAuthorization = authorization !== undefined && authorization.startsWith(prefix);
  if (hadPortcullisAuthorization) handle ??= authorization.slice(prefix.length).trim();
  return { handle, cookieWithoutSession, hadSessionCookie, hadPortcullisAuthorization };
}

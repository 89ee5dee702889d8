import { stringifySetCookie } from 'cookie';
import type { CookieSettings } from '../types.js';

/**
 * The Set-Cookie value that removes the session cookie: the same name, path, domain, Secure,
 * HttpOnly and SameSite as it was set with (a browser only replaces a cookie whose name, domain
 * and path match), an empty value, Max-Age 0 and an Expires in the past for old clients.
 */
export function clearSessionCookie(cookie: CookieSettings): string {
  return stringifySetCookie({
    name: cookie.name,
    value: '',
    path: '/',
    ...(cookie.domain === undefined ? {} : { domain: cookie.domain }),
    maxAge: 0,
    expires: new Date(0),
    httpOnly: cookie.httpOnly,
    secure: cookie.secure,
    ...(cookie.sameSite === '' ? {} : { sameSite: cookie.sameSite }),
  });
}

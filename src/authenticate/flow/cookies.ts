/**
 * The cookies the sign-in flow sets, serialized by the `cookie` library: the session cookie (the
 * handle; the same name and attributes on the authenticate host and on route hosts, so sign-out
 * clears it the same way everywhere: pages/session-cookie.ts) and the per-flow cookie on the
 * authenticate host.
 */
import { stringifySetCookie, type SetCookie } from 'cookie';
import type { CookieSettings } from '../types.js';

/** The per-flow cookie's name: one per sign-in, so parallel sign-ins in several tabs do not collide. */
export function flowCookieName(settings: CookieSettings, flowId: string): string {
  return `${settings.name}_flow_${flowId}`;
}

/** Same-site attribute for the `cookie` library; '' sends none. */
function sameSite(value: CookieSettings['sameSite']): 'strict' | 'lax' | 'none' | undefined {
  return value === '' ? undefined : value;
}

/**
 * Set-Cookie for the session handle: `cookie_*` settings (name, domain, HttpOnly, Secure,
 * SameSite), Path `/`, Max-Age from the session's remaining lifetime (whole seconds, at least 0).
 */
export function sessionCookie(settings: CookieSettings, handle: string, maxAgeMs: number): string {
  const options: SetCookie = {
    name: settings.name,
    value: handle,
    path: '/',
    maxAge: Math.max(0, Math.floor(maxAgeMs / 1000)),
    httpOnly: settings.httpOnly,
    secure: settings.secure,
  };
  if (settings.domain !== undefined) options.domain = settings.domain;
  const site = sameSite(settings.sameSite);
  if (site !== undefined) options.sameSite = site;
  return stringifySetCookie(options);
}

/**
 * The Set-Cookie value that removes the session cookie: `sessionCookie` with an empty value and
 * Max-Age 0, so name, path, domain and attributes match the cookie being removed (a browser only
 * replaces a cookie whose name, domain and path match).
 */
export function clearSessionCookie(settings: CookieSettings): string {
  return sessionCookie(settings, '', 0);
}

/**
 * Set-Cookie for one flow cookie: Path = the callback path (sent only there), Max-Age `maxAgeMs`,
 * HttpOnly, Secure per settings, SameSite Lax (the IdP's redirect back is a top-level GET) or None
 * for form_post providers (the IdP's POST back is cross-site; browsers require Secure with it).
 * Host-only: never the cookie domain.
 */
export function flowCookie(
  settings: CookieSettings,
  callbackPath: string,
  flowId: string,
  value: string,
  maxAgeMs: number,
  formPost: boolean,
): string {
  return stringifySetCookie({
    name: flowCookieName(settings, flowId),
    value,
    path: callbackPath,
    maxAge: Math.max(0, Math.floor(maxAgeMs / 1000)),
    httpOnly: true,
    secure: settings.secure || formPost,
    sameSite: formPost ? 'none' : 'lax',
  });
}

/** Set-Cookie that removes one flow cookie. */
export function clearFlowCookie(
  settings: CookieSettings,
  callbackPath: string,
  flowId: string,
  formPost: boolean,
): string {
  return flowCookie(settings, callbackPath, flowId, '', 0, formPost);
}

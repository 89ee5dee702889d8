import { stringifySetCookie, type SetCookie } from 'cookie';

/**
 * How the decision-token cookie is set: its name (`decisionCookieName` of the session cookie's),
 * and the session cookie's Secure and SameSite policy, so the browser sends the token exactly
 * when it sends the session (a cross-site request the session cookie stays away from must not
 * be replayed by the fast path either).
 */
export interface DecisionCookieSettings {
  readonly name: string;
  /** Secure: the session cookie's (false only on a plain-HTTP listener, `insecure_server`). */
  readonly secure: boolean;
  /** The session cookie's SameSite; '' sends no attribute. */
  readonly sameSite: '' | 'strict' | 'lax' | 'none';
}

/**
 * Set-Cookie for a decision token, serialized by the `cookie` library: Path `/`, Max-Age
 * `maxAgeS` (the token's remaining life, so the browser drops it when Envoy would refuse it),
 * HttpOnly (no script needs it), Secure and SameSite per `settings`, and host-only (no Domain):
 * a token names one host, and other hosts under the cookie domain would only carry it uselessly.
 */
export function decisionSetCookie(settings: DecisionCookieSettings, token: string, maxAgeS: number): string {
  const options: SetCookie = {
    name: settings.name,
    value: token,
    path: '/',
    maxAge: Math.max(0, Math.floor(maxAgeS)),
    httpOnly: true,
    secure: settings.secure,
  };
  if (settings.sameSite !== '') options.sameSite = settings.sameSite;
  return stringifySetCookie(options);
}

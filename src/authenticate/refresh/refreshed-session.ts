import type { OAuthTokens, Session } from '../../session/session.js';
import { sealTokens } from '../../session/session-tokens.js';
import type { RefreshResult } from '../types.js';

/**
 * The session after a refresh: new tokens sealed (the old refresh and ID tokens kept when the
 * IdP returned none), the new claims merged over the old (email, name and groups follow them),
 * expiresAt unchanged. `emailVerified` follows the refresh when it brought an address or a verdict
 * (a new, unverified address must not inherit the old one's), else stays as it was. An ID token kept from before has already expired, so its expiry no
 * longer drives the schedule.
 */
export async function refreshedSession(
  session: Session,
  old: OAuthTokens,
  result: RefreshResult,
  secret: Uint8Array,
): Promise<Session> {
  const tokens = await sealTokens(secret, session.id, {
    ...result,
    accessToken: result.accessToken ?? old.accessToken,
    refreshToken: result.refreshToken ?? old.refreshToken,
    idToken: result.idToken ?? old.idToken,
    idTokenExpiresAt: result.idToken === undefined ? undefined : result.idTokenExpiresAt,
  });
  const claims = { ...session.claims, ...result.claims };
  const text = (value: unknown, fallback: string | undefined): string | undefined =>
    typeof value === 'string' ? value : fallback;
  const groups = Array.isArray(claims.groups)
    ? claims.groups.filter((group): group is string => typeof group === 'string')
    : session.groups;
  return {
    ...session,
    email: text(claims.email, session.email),
    emailVerified:
      typeof result.claims.email === 'string' || result.claims.email_verified !== undefined
        ? result.emailVerified
        : session.emailVerified,
    name: text(claims.name, session.name),
    groups,
    claims,
    tokens,
  };
}

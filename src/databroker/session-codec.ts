import type { SealedTokens, Session } from '../session/session.js';

/**
 * The Session that `value` (a session record's opened JSON) holds for `id`, or undefined when it is
 * not one (a record of another shape, or of another id). Optional fields come back as explicit
 * `undefined`, so a session read from the store equals the one written (JSON drops undefined).
 * Sealed data is authenticated, so this guards against other versions' shapes, not forgery.
 */
export function decodeSession(value: unknown, id: string): Session | undefined {
  if (!isObject(value) || value.id !== id) return undefined;
  const { userId, issuedAt, expiresAt, idpId, groups, claims } = value;
  if (typeof userId !== 'string' || typeof idpId !== 'string') return undefined;
  if (typeof issuedAt !== 'number' || typeof expiresAt !== 'number') return undefined;
  if (!Array.isArray(groups) || !groups.every((group) => typeof group === 'string')) return undefined;
  if (!isObject(claims)) return undefined;
  const tokens = value.tokens === undefined ? undefined : decodeTokens(value.tokens);
  if (value.tokens !== undefined && tokens === undefined) return undefined;
  const session: Session = {
    id,
    userId,
    email: optionalString(value.email),
    // Absent in sessions stored before it was recorded: undefined, never a guess (see Session).
    emailVerified: typeof value.emailVerified === 'boolean' ? value.emailVerified : undefined,
    name: optionalString(value.name),
    groups: groups as string[],
    claims,
    issuedAt,
    expiresAt,
    idpId,
  };
  return tokens === undefined ? session : { ...session, tokens };
}

function decodeTokens(value: unknown): SealedTokens | undefined {
  if (!isObject(value) || typeof value.sealed !== 'string' || typeof value.refreshable !== 'boolean') {
    return undefined;
  }
  return {
    sealed: value.sealed,
    accessTokenExpiresAt: optionalNumber(value.accessTokenExpiresAt),
    idTokenExpiresAt: optionalNumber(value.idTokenExpiresAt),
    refreshable: value.refreshable,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function optionalNumber(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

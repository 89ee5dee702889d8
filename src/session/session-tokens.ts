import { CompactEncrypt, compactDecrypt } from 'jose';
import type { OAuthTokens, SealedTokens } from './session.js';
import { deriveKey } from '../shared/key-schedule.js';

/** What a sign-in or refresh gave: the tokens to seal and their expiry times (Unix ms). */
export interface TokensToSeal extends OAuthTokens {
  readonly accessTokenExpiresAt: number | undefined;
  readonly idTokenExpiresAt: number | undefined;
}

/**
 * Seals a session's OAuth tokens (JWE compact, `dir` + A256GCM through jose) under a key derived
 * from `shared_secret`, with the session id bound in the protected header and checked on open, so
 * sealed tokens copied onto another session do not open. The expiry times stay in the clear for
 * the refresher's schedule. Here beside the session model because authenticate seals them and
 * authorize opens them too (for routes that send them upstream).
 */
export async function sealTokens(
  sharedSecret: Uint8Array,
  sessionId: string,
  result: TokensToSeal,
): Promise<SealedTokens> {
  const tokens: OAuthTokens = {
    accessToken: result.accessToken,
    refreshToken: result.refreshToken,
    idToken: result.idToken,
  };
  const sealed = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(tokens)))
    .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', sid: sessionId })
    .encrypt(deriveKey(sharedSecret, 'session-tokens'));
  return {
    sealed,
    accessTokenExpiresAt: result.accessTokenExpiresAt,
    idTokenExpiresAt: result.idTokenExpiresAt,
    refreshable: result.refreshToken !== undefined,
  };
}

/**
 * Opens what `sealTokens` sealed for `sessionId`. Throws when the key, the session id or the bytes
 * do not match (a store value from elsewhere); callers treat that as a session without tokens.
 */
export async function openTokens(
  sharedSecret: Uint8Array,
  sessionId: string,
  sealed: SealedTokens,
): Promise<OAuthTokens> {
  const { plaintext, protectedHeader } = await compactDecrypt(
    sealed.sealed,
    deriveKey(sharedSecret, 'session-tokens'),
    { keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] },
  );
  if (protectedHeader.sid !== sessionId) throw new Error('sealed tokens belong to another session');
  const parsed = JSON.parse(new TextDecoder().decode(plaintext)) as Partial<OAuthTokens>;
  const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
  return {
    accessToken: text(parsed.accessToken),
    refreshToken: text(parsed.refreshToken),
    idToken: text(parsed.idToken),
  };
}

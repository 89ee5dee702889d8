/**
 * Whether a sign-in's e-mail address counts for policies (Session.emailVerified). Only the
 * provider's own word makes an address verified: `email_verified` true (or the string "true",
 * which Apple and Cognito's userinfo send). A missing or any other value is unverified, for every
 * built-in provider: none of them is known to return only verified addresses (Entra ID, `azure`,
 * sends no `email_verified` at all and lets users set unverified addresses, hence the opt-out).
 * GitHub's client sets `email_verified` from the `verified` flag of the primary address
 * (`/user/emails`). `idp_trust_unverified_email` (ProviderConfig.trustUnverifiedEmail) makes every
 * address count, for providers that verify addresses but do not say so.
 */
import type { ProviderConfig } from '../types.js';

/** The verdict for `claims`, the claim set that supplied the address (see module comment). */
export function emailVerifiedBy(
  claims: Readonly<Record<string, unknown>>,
  config: Pick<ProviderConfig, 'trustUnverifiedEmail'>,
): boolean {
  if (config.trustUnverifiedEmail === true) return true;
  const said = claims['email_verified'];
  return said === true || said === 'true';
}

import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { Session } from '../../session/session.js';
import type { SigningKey } from '../../keys/signing-key.js';
import type { AssertionTarget } from '../request-host.js';

/** Lifetime of an identity assertion (the spec's peer: iat + 5 minutes). */
export const ASSERTION_LIFETIME_S = 300;

/** Claims of the identity assertion, before signing. */
export interface AssertionClaims {
  readonly iss: string;
  readonly aud: string;
  readonly sub: string;
  readonly user: string;
  readonly email: string;
  /**
   * Whether `email` counts as verified here (the IdP's `email_verified`, or the operator's
   * `idp_trust_unverified_email`): an upstream must not trust an address for which it is false.
   */
  readonly email_verified: boolean;
  readonly groups: readonly string[];
  readonly name: string;
  readonly sid: string;
  readonly jti: string;
  readonly iat: number;
  readonly exp: number;
  readonly [extra: string]: unknown;
}

/**
 * The claims for `session` on a request whose issuer and audience are `target` (the request host,
 * port included: port-specific, as the spec says; see request-host.ts). `groups` is always an array; `extraClaims`
 * holds the session claims named in `jwt_claims_headers`; `groupsFilter` (`jwt_groups_filter`)
 * keeps only the listed groups, so users in hundreds of groups do not get huge assertions.
 */
export function assertionClaims(
  session: Session,
  target: AssertionTarget,
  nowMs: number,
  extraClaims: readonly string[] = [],
  groupsFilter?: ReadonlySet<string>,
): AssertionClaims {
  const iat = Math.floor(nowMs / 1000);
  const extra: Record<string, unknown> = {};
  for (const name of extraClaims) {
    const value = session.claims[name];
    if (value !== undefined) extra[name] = value;
  }
  return {
    ...extra,
    iss: target.issuer,
    aud: target.audience,
    sub: session.userId,
    user: session.userId,
    email: session.email ?? '',
    email_verified: session.email !== undefined && session.emailVerified === true,
    groups:
      groupsFilter === undefined
        ? [...session.groups]
        : session.groups.filter((group) => groupsFilter.has(group)),
    name: session.name ?? '',
    sid: session.id,
    jti: randomUUID(),
    iat,
    exp: iat + ASSERTION_LIFETIME_S,
  };
}

/** Signs assertion claims as a compact JWS with `kid` = the key's JWK thumbprint. */
export function signAssertion(key: SigningKey, claims: AssertionClaims): Promise<string> {
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .sign(key.privateKey);
}

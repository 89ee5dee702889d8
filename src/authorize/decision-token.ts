import { SignJWT } from 'jose';
import type { SigningKey } from '../keys/signing-key.js';
import { DECISION_TOKEN_ISSUER, DECISION_TOKEN_TYPE } from '../contract/fast-path.js';

/**
 * The largest decision token, in bytes: with its cookie name and attributes it stays under the
 * 4 KiB browsers keep per cookie, and under jwt_authn's default `jwt_max_token_size` (4096).
 */
export const MAX_DECISION_TOKEN_BYTES = 3584;

/** Base64url characters of an ES256 signature (64 bytes). */
const ES256_SIGNATURE_CHARS = 86;

/** What a decision token says: this session may use these routes of this host, until `exp`. */
export interface DecisionClaims {
  readonly iss: typeof DECISION_TOKEN_ISSUER;
  /** The route host (lower case, with a non-default port), as Envoy's jwt_authn checks `aud`. */
  readonly aud: string;
  /** The session id: Envoy's revocation set names sessions by it. */
  readonly sid: string;
  /** Decision names (translate/decision-name.ts) of the routes this session was allowed on. */
  readonly r: readonly string[];
  readonly iat: number;
  readonly exp: number;
}

/** One allow to hand out: the host, the session, the routes it was allowed on, and for how long. */
export interface DecisionGrant {
  readonly host: string;
  readonly sessionId: string;
  /** Decision names, the route of the request being answered first: what does not fit is left out. */
  readonly routes: readonly string[];
  readonly nowMs: number;
  readonly lifetimeS: number;
}

/**
 * Signs a decision token for `grant` with the decision key (never the identity signing key, so an
 * assertion an upstream received never verifies as one). Routes that would take the token past
 * MAX_DECISION_TOKEN_BYTES are left out, last first: those routes simply ask Portcullis. Returns
 * the token and the routes it names; none when not even the first route fits (a very long host
 * or session id), and then the request is answered without a token, as today.
 */
export async function mintDecisionToken(
  key: SigningKey,
  grant: DecisionGrant,
): Promise<{ readonly token: string; readonly routes: readonly string[] } | undefined> {
  const header = { alg: key.alg, kid: key.kid, typ: DECISION_TOKEN_TYPE };
  const iat = Math.floor(grant.nowMs / 1000);
  const claimsFor = (routes: readonly string[]): DecisionClaims => ({
    iss: DECISION_TOKEN_ISSUER,
    aud: grant.host,
    sid: grant.sessionId,
    r: routes,
    iat,
    exp: iat + grant.lifetimeS,
  });
  // The largest prefix of the routes that fits (a longer prefix never fits when a shorter one does not).
  const fits = (n: number): boolean =>
    tokenBytes(header, claimsFor(grant.routes.slice(0, n))) <= MAX_DECISION_TOKEN_BYTES;
  let count = 0;
  let tooMany = grant.routes.length + 1;
  while (tooMany - count > 1) {
    const middle = Math.floor((count + tooMany) / 2);
    if (fits(middle)) count = middle;
    else tooMany = middle;
  }
  if (count === 0) return undefined;
  const routes = grant.routes.slice(0, count);
  const token = await new SignJWT({ ...claimsFor(routes) }).setProtectedHeader(header).sign(key.privateKey);
  return { token, routes };
}

/** The length of the compact ES256 JWS of `header` and `claims`, without signing it. */
function tokenBytes(header: object, claims: DecisionClaims): number {
  const encoded = (value: object): number =>
    Buffer.byteLength(Buffer.from(JSON.stringify(value)).toString('base64url'));
  return encoded(header) + 1 + encoded(claims) + 1 + ES256_SIGNATURE_CHARS;
}

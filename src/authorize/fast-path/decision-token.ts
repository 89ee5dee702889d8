import { decodeJwt, SignJWT } from 'jose';
import type { SigningKey } from '../../keys/signing-key.js';
import { DECISION_TOKEN_ISSUER, DECISION_TOKEN_TYPE } from '../../contract/fast-path.js';

/**
 * The largest decision token, in bytes: with its cookie name and attributes it stays under the
 * 4 KiB browsers keep per cookie, and under jwt_authn's default `jwt_max_token_size` (4096).
 */
export const MAX_DECISION_TOKEN_BYTES = 3584;

/** Base64url characters of an ES256 signature (64 bytes). */
const ES256_SIGNATURE_CHARS = 86;

/**
 * What a decision token says: this session may use these routes of this host, until `exp`, and
 * the upstream gets these identity headers. Claim names are contract/fast-path.ts's DECISION_CLAIMS.
 */
export interface DecisionClaims {
  readonly iss: typeof DECISION_TOKEN_ISSUER;
  /** The route host (lower case, with a non-default port), as Envoy's jwt_authn checks `aud`. */
  readonly aud: string;
  /** The decision session id (`decisionSessionId`): Envoy's revocation set names sessions by it. */
  readonly sid: string;
  /** Decision names (translate/decision-name.ts) of the routes this session was allowed on. */
  readonly r: readonly string[];
  /** When it was minted (Unix ms): a revocation refuses tokens minted at or before its time. */
  readonly v: number;
  /** The identity assertion for this host, as the slow path sends it (X-Portcullis-Jwt-Assertion). */
  readonly ja?: string;
  /** Claim header values by `claimHeaderKey(index)`, as the slow path sets them. */
  readonly h?: Readonly<Record<string, string>>;
  readonly iat: number;
  readonly exp: number;
}

/** One allow to hand out: the host, the session, the routes it was allowed on, and for how long. */
export interface DecisionGrant {
  readonly host: string;
  /** `decisionSessionId` of the session: never the session id itself (the cookie must not show it). */
  readonly sid: string;
  /** Decision names, the route of the request being answered first: what does not fit is left out. */
  readonly routes: readonly string[];
  readonly nowMs: number;
  /** The token's longest life (`decision_token_lifetime`). */
  readonly lifetimeMs: number;
  /** When the session ends (Unix ms): no token outlives it. */
  readonly sessionExpiresAtMs: number;
  /** The identity assertion to carry (`ja`); no token outlives its `exp` either. */
  readonly assertion?: string;
  /** Claim header values to carry (`h`), keyed by `claimHeaderKey`; omitted when empty. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A signed decision token, what it names, and when it was minted and expires. */
export interface MintedDecision {
  readonly token: string;
  readonly routes: readonly string[];
  /** `v`, Unix ms. */
  readonly mintedMs: number;
  /** `exp`, Unix seconds. */
  readonly exp: number;
}

/**
 * Signs a decision token for `grant` with the decision key (never the identity signing key, so an
 * assertion an upstream received never verifies as one). `exp` is the earliest of now + lifetime,
 * the assertion's `exp` and the session's end, so Envoy never replays an allow (or forwards an
 * assertion) past what the slow path would give. Routes that would take the token past
 * MAX_DECISION_TOKEN_BYTES are left out, last first: those routes simply ask Portcullis. Returns
 * undefined when not even the first route fits beside the assertion, or when the token would
 * expire within the second it is minted; the request is then answered without a token, as today.
 */
export async function mintDecisionToken(
  key: SigningKey,
  grant: DecisionGrant,
): Promise<MintedDecision | undefined> {
  const header = { alg: key.alg, kid: key.kid, typ: DECISION_TOKEN_TYPE };
  const iat = Math.floor(grant.nowMs / 1000);
  const exp = expiry(grant);
  if (exp <= iat) return undefined;
  const headers =
    grant.headers !== undefined && Object.keys(grant.headers).length > 0 ? grant.headers : undefined;
  const claimsFor = (routes: readonly string[]): DecisionClaims => ({
    iss: DECISION_TOKEN_ISSUER,
    aud: grant.host,
    sid: grant.sid,
    r: routes,
    v: grant.nowMs,
    ...(grant.assertion === undefined ? {} : { ja: grant.assertion }),
    ...(headers === undefined ? {} : { h: headers }),
    iat,
    exp,
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
  return { token, routes, mintedMs: grant.nowMs, exp };
}

/** `exp` in Unix seconds: the earliest end of the lifetime, the session and the assertion. */
function expiry(grant: DecisionGrant): number {
  const ends = [grant.nowMs + grant.lifetimeMs, grant.sessionExpiresAtMs];
  let exp = Math.floor(Math.min(...ends) / 1000);
  if (grant.assertion !== undefined) {
    // The assertion is our own signed JWT; its `exp` bounds how long the upstream may be given it.
    const assertionExp = decodeJwt(grant.assertion).exp;
    if (assertionExp === undefined) return 0;
    exp = Math.min(exp, assertionExp);
  }
  return exp;
}

/** The length of the compact ES256 JWS of `header` and `claims`, without signing it. */
function tokenBytes(header: object, claims: DecisionClaims): number {
  const encoded = (value: object): number =>
    Buffer.byteLength(Buffer.from(JSON.stringify(value)).toString('base64url'));
  return encoded(header) + 1 + encoded(claims) + 1 + ES256_SIGNATURE_CHARS;
}

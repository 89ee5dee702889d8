import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';

/** An ES256 key made at test time, and the public JWK set (JSON) Envoy's jwt_authn trusts. */
export interface DecisionKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  /** `{"keys":[<public JWK>]}` */
  readonly jwks: string;
}

/** A fresh ES256 key pair under `kid`; never committed, never reused across runs. */
export async function makeDecisionKey(kid: string): Promise<DecisionKey> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  return { kid, privateKey, jwks: JSON.stringify({ keys: [jwk] }) };
}

/** Claims of a decision token; `exp` defaults to now + 120 s, `iat` to now. */
export interface DecisionClaims extends JWTPayload {
  readonly sid: string;
  readonly r: unknown;
}

/** Signs `claims` with `key` (ES256, its kid in the header). */
export function signDecision(key: DecisionKey, claims: DecisionClaims): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iat: now, exp: now + 120, ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'JWT' })
    .sign(key.privateKey);
}

/** An unsigned token (`alg: none`, empty signature) with the same claims. */
export function unsignedDecision(kid: string, claims: DecisionClaims): string {
  const now = Math.floor(Date.now() / 1000);
  const part = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', kid, typ: 'JWT' })}.${part({ iat: now, exp: now + 120, ...claims })}.`;
}

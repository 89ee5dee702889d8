import type { Session } from '../../src/session/session.js';
import { generatedRoutes, headerYaml } from './config-gen.js';

/** Host of the route that skips ext_authz (the baseline). */
export const BARE_HOST = 'bare.bench.test';
/** Host of the same upstream behind ext_authz with identity headers (the signed assertion). */
export const AUTHZ_HOST = 'authz.bench.test';
/**
 * Host of a third route, the same as `AUTHZ_HOST` (same upstream, policy and assertion), whose
 * Checks the benchmark's server answers with the first decision it made for it, again and again
 * (`fixedDecisionAuthorizer`): ext_authz with the decision taken out (no session lookup, policy,
 * or assertion cache), decode, encode and the hop itself left in.
 */
export const FIXED_DECISION_HOST = 'fixed.bench.test';
/** Fixed shared secret, so a benchmark process can issue handles and derive the signing key itself. */
export const BENCH_SHARED_SECRET = Buffer.alloc(32, 9).toString('base64');

/** Ports and upstream of one authorization benchmark config. */
export interface AuthzConfigSettings {
  readonly address: string;
  readonly grpcAddress: string;
  readonly adminAddress?: string;
  /** `host:port` of the upstream both measured routes share. */
  readonly upstream: string;
  /** Extra generated routes (public, 127.x port 9, quiet health checks) loaded beside the two. */
  readonly extraRoutes: number;
}

/**
 * The authorization benchmark's config: the bare route (`allow_public_unauthenticated_access`,
 * Envoy skips ext_authz) and the protected route (`allow_any_authenticated_user`,
 * `pass_identity_headers`, so every allowed Check carries the signed assertion) and its copy on
 * `FIXED_DECISION_HOST`, all to the same upstream, plus `extraRoutes` generated routes so route
 * lookup runs against a full table.
 */
export function authzConfigYaml(settings: AuthzConfigSettings): string {
  const measured = [
    `  - from: https://${BARE_HOST}`,
    `    to: http://${settings.upstream}`,
    `    allow_public_unauthenticated_access: true`,
    `  - from: https://${AUTHZ_HOST}`,
    `    to: http://${settings.upstream}`,
    `    allow_any_authenticated_user: true`,
    `    pass_identity_headers: true`,
    `  - from: https://${FIXED_DECISION_HOST}`,
    `    to: http://${settings.upstream}`,
    `    allow_any_authenticated_user: true`,
    `    pass_identity_headers: true`,
    '',
  ].join('\n');
  const extra = generatedRoutes(settings.extraRoutes, {
    network: 127,
    upstreamPort: 9,
    healthCheckInterval: '30s',
    healthCheckInitialJitter: `${Math.max(1, Math.ceil(settings.extraRoutes / 1000))}s`,
    public: true,
  });
  return [
    headerYaml({
      address: settings.address,
      grpcAddress: settings.grpcAddress,
      ...(settings.adminAddress === undefined ? {} : { adminAddress: settings.adminAddress }),
    }),
    `shared_secret: ${BENCH_SHARED_SECRET}\n`,
    'jwt_claims_headers: [department]\n',
    'routes:\n',
    measured,
    ...extra,
  ].join('');
}

/** A benchmark session's id; `index` runs over the loaded sessions. */
export function benchSessionId(index: number): string {
  return `bench-session-${index}`;
}

/** Bench session `index`, valid for an hour from `now`: the same user shape in every authz bench. */
export function benchSession(index: number, now: number): Session {
  return {
    id: benchSessionId(index),
    userId: `user-${index}`,
    email: `user${index}@example.com`,
    name: `User ${index}`,
    groups: ['staff'],
    claims: { department: 'research', groups: ['staff'], email: `user${index}@example.com` },
    issuedAt: now,
    expiresAt: now + 3_600_000,
  };
}

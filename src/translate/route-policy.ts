import type { Criterion, PolicyRule } from '../ir/policy.js';
import type { RouteSettings } from '../config/types.js';

/**
 * A route's access settings as one list of policy rules, the way the peer assembles them
 * (pomerium-behaviour.md 2.4): one allow rule whose `or` holds the shortcuts in order (public
 * access, CORS preflight, any authenticated user, allowed domains, allowed claims, allowed users
 * by id or email), then the route's own `policy` rules. A route with no access settings gets no
 * rules, which allows nobody (403, without a sign-in prompt).
 */
export function assembleRoutePolicy(route: RouteSettings): readonly PolicyRule[] {
  const at = route.source_path;
  const or: Criterion[] = [];
  if (route.allow_public_unauthenticated_access)
    or.push({ kind: 'accept', path: `${at}.allow_public_unauthenticated_access` });
  if (route.cors_allow_preflight) or.push({ kind: 'cors_preflight', path: `${at}.cors_allow_preflight` });
  if (route.allow_any_authenticated_user)
    or.push({ kind: 'authenticated_user', path: `${at}.allow_any_authenticated_user` });
  route.allowed_domains.forEach((domain, index) =>
    or.push({ kind: 'domain', matcher: { is: domain }, path: `${at}.allowed_domains[${index}]` }),
  );
  for (const [claim, values] of Object.entries(route.allowed_idp_claims)) {
    values.forEach((value, index) =>
      or.push({
        kind: 'claim',
        claim,
        matcher: { has: { is: value } },
        path: `${at}.allowed_idp_claims.${claim}[${index}]`,
      }),
    );
  }
  route.allowed_users.forEach((user, index) => {
    const path = `${at}.allowed_users[${index}]`;
    or.push({ kind: 'user', matcher: { is: user }, path }, { kind: 'email', matcher: { is: user }, path });
  });
  // The config's validated rules have the IR's shape: they are taken as they are (immutable).
  const own: readonly PolicyRule[] = route.policy;
  if (or.length === 0) return own;
  return [{ action: 'allow', and: [], or, not: [], nor: [], path: at }, ...own];
}

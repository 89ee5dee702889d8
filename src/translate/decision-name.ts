import { CATCH_ALL_VHOST, type IRAuthorize, type IRRoute } from '../ir/types.js';
import type { Criterion, PolicyRule } from '../ir/policy.js';
import { canonicalJson } from '../shared/canonical-json.js';
import { shortHash } from '../shared/hash.js';
import { DECISION_NAME_IDENTITY_SUFFIX } from '../contract/fast-path.js';

/**
 * Criteria whose outcome depends on the request, not only on who the session is: the method, the
 * path, the client's address or certificate, a CORS preflight, the device. A decision that used one
 * says nothing about the next request, so Envoy must never replay it (the fast path's first rule).
 */
const REQUEST_CRITERIA: ReadonlySet<Criterion['kind']> = new Set([
  'http_method',
  'http_path',
  'source_ip',
  'cors_preflight',
  'client_certificate',
  'invalid_client_certificate',
  'device',
]);

/** Why Portcullis decides every request of a route itself (none: Envoy may replay its allow). */
export type SlowPathReason =
  | 'public'
  | 'answers-itself'
  | 'tcp'
  | 'request-identity-headers'
  | 'request-header-templates'
  | `criterion:${Criterion['kind']}`;

/**
 * Why the route can never take the fast path, or undefined when an allow depends on the session
 * alone: public routes never consult it, routes that answer by themselves and TCP routes are
 * decided once, routes that let client identity headers through depend on the request, and so does
 * a policy naming a request criterion (anywhere in any rule, allow or deny: deny beats allow).
 * A route whose request headers carry the session's tokens or claims (`requestHeaderTemplates`)
 * has them filled in by Portcullis on every request: a replayed allow would have to carry them in
 * the client-held decision cookie, and the IdP's tokens must never reach the client.
 */
export function slowPathReason(
  route: Pick<
    IRRoute,
    'public' | 'policy' | 'answer' | 'tcpAuthority' | 'passRequestIdentityHeaders' | 'requestHeaderTemplates'
  >,
): SlowPathReason | undefined {
  if (route.public) return 'public';
  if (route.answer !== undefined) return 'answers-itself';
  if (route.tcpAuthority !== undefined) return 'tcp';
  if ((route.passRequestIdentityHeaders?.length ?? 0) > 0) return 'request-identity-headers';
  if (route.requestHeaderTemplates !== undefined) return 'request-header-templates';
  const kind = requestCriterion(route.policy);
  return kind === undefined ? undefined : `criterion:${kind}`;
}

/** The first request criterion any rule of `policy` names. */
function requestCriterion(policy: readonly PolicyRule[]): Criterion['kind'] | undefined {
  for (const rule of policy) {
    for (const criterion of [...rule.and, ...rule.or, ...rule.not, ...rule.nor]) {
      if (REQUEST_CRITERIA.has(criterion.kind)) return criterion.kind;
    }
  }
  return undefined;
}

/**
 * The name a decision token gives this route: `<route id>.<checksum>`, and `.i` after it
 * (DECISION_NAME_IDENTITY_SUFFIX) when the route sends identity headers upstream, the checksum over
 * everything the allow and what the upstream receives depend on (the policy, the identity provider
 * whose sessions count, whether identity headers are sent, the headers set, and the global claim
 * headers, issuer format and groups filter). Editing any of them renames the route, so every token
 * naming the old name stops matching at once and the next request asks Portcullis. Deterministic:
 * key paths in the policy are left out, so moving a route in the file keeps its name.
 */
export function decisionName(route: IRRoute, authorize: IRAuthorize): string {
  const policy = route.policy.map(({ path: _path, ...rule }) => ({
    ...rule,
    and: withoutPaths(rule.and),
    or: withoutPaths(rule.or),
    not: withoutPaths(rule.not),
    nor: withoutPaths(rule.nor),
  }));
  const decidedBy = canonicalJson({
    policy,
    idp: route.idpId,
    identityHeaders: route.passIdentityHeaders,
    set: route.requestHeadersToSet,
    claims: authorize.claimHeaders,
    issuer: authorize.issuerFormat,
    groups: authorize.groupsFilter ?? null,
  });
  const identity = route.passIdentityHeaders ? DECISION_NAME_IDENTITY_SUFFIX : '';
  return `${route.id}.${shortHash(decidedBy)}${identity}`;
}

function withoutPaths(criteria: readonly Criterion[]): readonly Omit<Criterion, 'path'>[] {
  return criteria.map(({ path: _path, ...criterion }) => criterion);
}

/**
 * `route` with its `decisionName` set when Envoy may replay its allows: a route with no slow-path
 * reason, on a host of exact names (`domains` of its virtual host `vhost`). A wildcard host is
 * never replayed: a token is minted for one concrete host (its assertion names it as `aud`), and
 * only an exact host ties every request that reaches the route to that one host. Otherwise the
 * route as it is. Depends on the route and its placement only, so each route is named on its own.
 */
export function withDecisionName(
  route: IRRoute,
  vhost: string,
  domains: readonly string[],
  authorize: IRAuthorize,
): IRRoute {
  const exact = vhost !== CATCH_ALL_VHOST && domains.every((domain) => !domain.includes('*'));
  return exact && route.authorityRegex === undefined && slowPathReason(route) === undefined
    ? { ...route, decisionName: decisionName(route, authorize) }
    : route;
}

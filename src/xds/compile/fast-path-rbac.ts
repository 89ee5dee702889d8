import {
  DECISION_CLAIMS,
  DECISION_PAYLOAD_KEY,
  DECISION_SID_HEADER,
  FAST_PATH_FILTER,
  FAST_PATH_STAT_PREFIX,
  type DecisionRevocation,
} from '../../contract/fast-path.js';
import { HTTP_FILTER_JWT_AUTHN } from '../../contract/names.js';
import { typed } from '../../proto/codec.js';
import type { Message } from '../../proto/messages.js';
import { and, celParsed, double, greater, ident, isIn, path, select, type CelNode } from './cel.js';

type Matcher = Message<'xds.type.matcher.v3.Matcher'>;
type OnMatch = Message<'xds.type.matcher.v3.Matcher.OnMatch'>;
type Predicate = Message<'xds.type.matcher.v3.Matcher.MatcherList.Predicate'>;

/** The RBAC filter's config type: what the ECDS resource and the filter's `type_urls` name. */
export const RBAC_TYPE = 'envoy.extensions.filters.http.rbac.v3.RBAC';

/**
 * The key of the revocation map that no token's sid can be (decision sids are 22 base64url
 * characters): Envoy refuses an empty `exact_match_map`, so the map always holds it.
 */
export const PLACEHOLDER_SID = '-none-';

/** The verified decision token's payload, as jwt_authn wrote it into dynamic metadata. */
const payload = path(select(ident('metadata'), 'filter_metadata'), [
  HTTP_FILTER_JWT_AUTHN,
  DECISION_PAYLOAD_KEY,
]);

/**
 * "The route is listed": the matched route's name is in the token's `r`. Envoy names each replayable
 * route by its decision name (fast-path.ts `withFastPath`) and no other route has a name of that
 * form (`<route id>.<checksum>`; other routes are `route-<id>` or unnamed), so this binds the token
 * to the route and its policy, and through the route id inside the name to its exact host. (CEL's
 * `xds.route_metadata` reads route metadata too, but that costs each route about 65 bytes.)
 */
export function routeListed(): CelNode {
  return isIn(select(ident('xds'), 'route_name'), path(payload, [DECISION_CLAIMS.routes]));
}

/** "The token was minted after `notBeforeMs`": its `v` (Unix ms) is greater. */
export function mintedAfter(notBeforeMs: number): CelNode {
  return greater(path(payload, [DECISION_CLAIMS.mintedMs]), double(notBeforeMs));
}

/** An xDS matcher predicate that holds when the CEL `node` evaluates to true. */
function celPredicate(node: CelNode): Predicate {
  return {
    single_predicate: {
      input: { name: 'cel', typed_config: typed('xds.type.matcher.v3.HttpAttributesCelMatchInput', {}) },
      custom_match: {
        name: 'cel',
        typed_config: typed('xds.type.matcher.v3.CelMatcher', {
          expr_match: { parsed_expr: celParsed(node) },
        }),
      },
    },
  };
}

/** The request header jwt_authn set from the token's `sid`. */
function sidInput(): Message<'xds.core.v3.TypedExtensionConfig'> {
  return {
    name: 'sid',
    typed_config: typed('envoy.type.matcher.v3.HttpRequestHeaderMatchInput', {
      header_name: DECISION_SID_HEADER,
    }),
  };
}

/** An RBAC action; `name` becomes the shadow result's effective policy id. */
function action(name: string, verdict: 'ALLOW' | 'DENY'): OnMatch {
  return { action: { name, typed_config: typed('envoy.config.rbac.v3.Action', { name, action: verdict }) } };
}

/** ALLOW `listed` when `predicate` holds, else DENY `otherwise`. */
function allowWhen(predicate: Predicate, otherwise: string): Matcher {
  return {
    matcher_list: { matchers: [{ predicate, on_match: action('listed', 'ALLOW') }] },
    on_no_match: action(otherwise, 'DENY'),
  };
}

/** A matcher tree on the sid header over `map` (with the placeholder), `onNoMatch` for other requests. */
function sidTree(map: ReadonlyMap<string, OnMatch>, onNoMatch: OnMatch): Matcher {
  const entries = new Map(map).set(PLACEHOLDER_SID, action('revoked', 'DENY'));
  const sorted = [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    matcher_tree: { input: sidInput(), exact_match_map: { map: Object.fromEntries(sorted) } },
    on_no_match: onNoMatch,
  };
}

/**
 * The shadow RBAC config of the fast path (its `shadow_matcher`; it never enforces anything, it
 * only writes `allowed` or `denied` under FAST_PATH_RESULT_KEY for ext_authz's gate):
 * - a sid in the revocation map allows only a token minted after its `notBeforeMs` whose `r` lists
 *   the route;
 * - any other request is allowed when it carries a sid (a token without `sid` could never be
 *   revoked) and its token lists the route;
 * - everything else is denied, and so is everything when `overflowed` (more revocations than the
 *   set keeps: every request asks Portcullis).
 * Sorted by sid, the latest `notBeforeMs` kept for a sid listed twice: equal sets give equal bytes.
 */
export function fastPathRbacConfig(
  revocations: readonly DecisionRevocation[],
  overflowed: boolean,
): Message<'envoy.extensions.filters.http.rbac.v3.RBAC'> {
  if (overflowed) return denyEverything('overflowed');
  const notBefore = new Map<string, number>();
  for (const { sid, notBeforeMs } of revocations)
    notBefore.set(sid, Math.max(notBeforeMs, notBefore.get(sid) ?? Number.NEGATIVE_INFINITY));
  const revoked = new Map<string, OnMatch>();
  for (const [sid, notBeforeMs] of notBefore)
    revoked.set(sid, {
      matcher: allowWhen(celPredicate(and(mintedAfter(notBeforeMs), routeListed())), 'revoked'),
    });
  const sidPresent: Predicate = {
    single_predicate: { input: sidInput(), value_match: { safe_regex: { google_re2: {}, regex: '.+' } } },
  };
  const listed: Predicate = { and_matcher: { predicate: [sidPresent, celPredicate(routeListed())] } };
  return {
    shadow_rules_stat_prefix: FAST_PATH_STAT_PREFIX,
    shadow_matcher: sidTree(revoked, { matcher: allowWhen(listed, 'unlisted') }),
  };
}

/**
 * A shadow RBAC config that denies every request (policy id `why`): the filter's default config,
 * in force until Envoy has the ECDS resource, and the overflowed one.
 */
export function denyEverything(why: string): Message<'envoy.extensions.filters.http.rbac.v3.RBAC'> {
  return {
    shadow_rules_stat_prefix: FAST_PATH_STAT_PREFIX,
    shadow_matcher: sidTree(new Map(), action(why, 'DENY')),
  };
}

/**
 * The ECDS resource carrying the fast path's shadow RBAC config (FAST_PATH_FILTER): the revoked
 * sessions, each refusing tokens minted at or before its `notBeforeMs`; `overflowed` refuses
 * every token (every request asks Portcullis). See `fastPathRbacConfig`. Pure and deterministic:
 * the revocation feed pushes it into the snapshot store's overlay on each change.
 */
export function compileFastPathRbac(
  revocations: readonly DecisionRevocation[],
  overflowed: boolean,
): Message<'envoy.config.core.v3.TypedExtensionConfig'> {
  return {
    name: FAST_PATH_FILTER,
    typed_config: typed(RBAC_TYPE, fastPathRbacConfig(revocations, overflowed)),
  };
}

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

/**
 * The nested matcher of a revoked sid: DENY `revoked` unless the token was minted after
 * `notBeforeMs`. It has no `on_no_match`: for a token minted later it does not match, and Envoy's
 * exact map matcher then falls through to the tree's own `on_no_match` (the ALLOW predicate every
 * token must pass), as test/integration/fast-path-compiled.test.ts shows in a real Envoy. So each
 * entry carries only its `v >` check and one action, not a copy of the shared predicate: 434 bytes
 * (protobuf) an entry instead of 691, 1.74 MB at 4,000 entries instead of 2.76 MB. A CEL error (no
 * `v`, or not a number) makes the CEL not match and so its negation match: refused.
 */
function refusedUntil(notBeforeMs: number): OnMatch {
  const notAfter: Predicate = { not_matcher: celPredicate(mintedAfter(notBeforeMs)) };
  return {
    matcher: { matcher_list: { matchers: [{ predicate: notAfter, on_match: action('revoked', 'DENY') }] } },
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

/** What the fast path's filter says besides the revoked sessions (DecisionRevocations' state). */
export interface FastPathRbacOptions {
  /** Refuse every token: revocations cannot be seen (the change feed is lost, or no store). */
  readonly refuseAll: boolean;
  /** Refuse every token minted at or before it (Unix ms), whatever its session; none if undefined. */
  readonly floorMs?: number | undefined;
}

/**
 * The shadow RBAC config of the fast path (its `shadow_matcher`; it never enforces anything, it
 * only writes `allowed` or `denied` under FAST_PATH_RESULT_KEY for ext_authz's gate):
 * - a sid in the revocation map is denied unless its token was minted after the later of its
 *   `notBeforeMs` and the floor; a later one goes on to the predicate below;
 * - a request is allowed when it carries a sid (a token without `sid` could never be revoked), its
 *   token lists the route and, with a floor, was minted after it (`v > floorMs`);
 * - everything else is denied, and so is everything with `refuseAll` (every request asks Portcullis).
 * Sorted by sid, the latest `notBeforeMs` kept for a sid listed twice: equal inputs give equal bytes.
 */
export function fastPathRbacConfig(
  revocations: readonly DecisionRevocation[],
  options: FastPathRbacOptions,
): Message<'envoy.extensions.filters.http.rbac.v3.RBAC'> {
  if (options.refuseAll) return denyEverything('refuse-all');
  const floorMs = options.floorMs;
  const notBefore = new Map<string, number>();
  for (const { sid, notBeforeMs } of revocations) {
    const until = Math.max(notBeforeMs, floorMs ?? Number.NEGATIVE_INFINITY);
    notBefore.set(sid, Math.max(until, notBefore.get(sid) ?? Number.NEGATIVE_INFINITY));
  }
  const revoked = new Map<string, OnMatch>();
  for (const [sid, notBeforeMs] of notBefore) revoked.set(sid, refusedUntil(notBeforeMs));
  const sidPresent: Predicate = {
    single_predicate: { input: sidInput(), value_match: { safe_regex: { google_re2: {}, regex: '.+' } } },
  };
  const honoured = floorMs === undefined ? routeListed() : and(mintedAfter(floorMs), routeListed());
  const listed: Predicate = { and_matcher: { predicate: [sidPresent, celPredicate(honoured)] } };
  return {
    shadow_rules_stat_prefix: FAST_PATH_STAT_PREFIX,
    shadow_matcher: sidTree(revoked, { matcher: allowWhen(listed, 'unlisted') }),
  };
}

/**
 * A shadow RBAC config that denies every request (policy id `why`): the filter's default config,
 * in force until Envoy has the ECDS resource, and the one refusing all.
 */
export function denyEverything(why: string): Message<'envoy.extensions.filters.http.rbac.v3.RBAC'> {
  return {
    shadow_rules_stat_prefix: FAST_PATH_STAT_PREFIX,
    shadow_matcher: sidTree(new Map(), action(why, 'DENY')),
  };
}

/**
 * The ECDS resource carrying the fast path's shadow RBAC config (FAST_PATH_FILTER): the revoked
 * sessions, each refusing tokens minted at or before its `notBeforeMs`; `floorMs` refusing every
 * token minted at or before it; `refuseAll` refusing every token (every request asks Portcullis).
 * See `fastPathRbacConfig`. Pure and deterministic: the revocation feed pushes it into the snapshot
 * store's overlay on each change. Its size is 434 bytes (protobuf) per revoked session, 1.74 MB at
 * the feed's default 4,000 (4.2 MB as JSON, in a config dump); test/unit/xds/fast-path-rbac.test.ts
 * measures it.
 */
export function compileFastPathRbac(
  revocations: readonly DecisionRevocation[],
  options: FastPathRbacOptions,
): Message<'envoy.config.core.v3.TypedExtensionConfig'> {
  return {
    name: FAST_PATH_FILTER,
    typed_config: typed(RBAC_TYPE, fastPathRbacConfig(revocations, options)),
  };
}

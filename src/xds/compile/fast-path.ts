import type { IR, IRAuthorize, IRInternal, IRRoute } from '../../ir/types.js';
import { typed } from '../../proto/codec.js';
import type { Message } from '../../proto/messages.js';
import { ASSERTION_HEADER } from '../../contract/authz.js';
import {
  DECISION_CLAIMS,
  DECISION_CLOCK_SKEW_S,
  DECISION_PAYLOAD_KEY,
  DECISION_PROVIDER,
  DECISION_SID_HEADER,
  DECISION_TOKEN_ISSUER,
  FAST_PATH_ALLOWED,
  FAST_PATH_FILTER,
  FAST_PATH_RESULT_KEY,
  claimHeaderKey,
  decisionClaimHeaders,
  decisionCookieName,
} from '../../contract/fast-path.js';
import { HTTP_FILTER_JWT_AUTHN, RBAC_METADATA_NAMESPACE } from '../../contract/names.js';
import { denyEverything, RBAC_TYPE } from './fast-path-rbac.js';

type HttpFilter = Message<'envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter'>;
type Route = Message<'envoy.config.route.v3.Route'>;

/** What decides whether the fast path is compiled: Portcullis's endpoints and the token lifetime. */
export type FastPathInputs = Pick<IR, 'internal'> & {
  readonly authorize: Pick<IRAuthorize, 'decisionTokenLifetimeMs'>;
};

/**
 * The internal endpoints when the fast path is on (authorization on and `decision_token_lifetime`
 * above 0), else undefined: with it off, compile emits exactly the filters and routes it did
 * before the fast path existed.
 */
export function fastPathInternal(ir: FastPathInputs): IRInternal | undefined {
  return ir.authorize.decisionTokenLifetimeMs > 0 ? ir.internal : undefined;
}

/**
 * Tokens jwt_authn keeps verified per worker. A token is at most 3.5 KiB (under jwt_authn's
 * default `jwt_max_token_size`, so every one is cached), so a full cache is a few MiB.
 */
const JWT_CACHE_SIZE = 1000;

/**
 * The headers jwt_authn sets from a decision token besides the sid: the assertion (`ja`) and the
 * claim headers (`h`), lower case and sorted. What the credential strip removes on a fast-path
 * allow of a route that sends no identity headers.
 */
export function tokenIdentityHeaders(claimHeaders: Readonly<Record<string, string>>): string[] {
  return [...new Set([ASSERTION_HEADER, ...decisionClaimHeaders(claimHeaders)])].sort();
}

/**
 * jwt_authn with the one decision-token provider: the token comes from the decision cookie only
 * (never `Authorization`, which may be the upstream's own credential), is verified against the
 * decision key's public JWKS inline (no fetch), must carry `exp` (with DECISION_CLOCK_SKEW_S of
 * skew) and the issuer DECISION_TOKEN_ISSUER, and has no audience: the host binding is the route's,
 * since a decision name holds the route id, which derives from the exact host. The verified payload
 * goes to dynamic metadata (`payload_in_metadata`) for the shadow RBAC, and its `sid`, `ja` and
 * `h.c<i>` claims become the sid, assertion and claim headers. A missing or failed token is allowed
 * through (the request then asks ext_authz).
 *
 * The requirement applies to every request (one filter-level rule), not per route: a per-route
 * config costs each route about 135 bytes, which a 10,000-route table cannot spare under 4 MiB. So
 * jwt_authn also verifies a token sent to a route it cannot open, and the headers it sets are
 * settled later wherever they must not reach an upstream: ext_authz removes or overwrites every
 * `x-portcullis-*` and claim header it did not set; public routes remove the identity headers
 * (`publicRouteHeadersToRemove`); the credential strip removes the sid header always, and the
 * assertion and claim headers on a fast-path allow of a route that sends none (`credentialStripScript`).
 */
export function jwtAuthnFilter(
  internal: IRInternal,
  authorize: Pick<IRAuthorize, 'cookieName' | 'claimHeaders'>,
): HttpFilter {
  const claimHeaders = decisionClaimHeaders(authorize.claimHeaders).map((header_name, index) => ({
    header_name,
    claim_name: `${DECISION_CLAIMS.headers}.${claimHeaderKey(index)}`,
  }));
  return {
    name: HTTP_FILTER_JWT_AUTHN,
    typed_config: typed('envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication', {
      providers: {
        [DECISION_PROVIDER]: {
          issuer: DECISION_TOKEN_ISSUER,
          require_expiration: true,
          local_jwks: { inline_string: internal.decisionJwksJson },
          from_cookies: [decisionCookieName(authorize.cookieName)],
          payload_in_metadata: DECISION_PAYLOAD_KEY,
          clock_skew_seconds: DECISION_CLOCK_SKEW_S,
          jwt_cache_config: { jwt_cache_size: JWT_CACHE_SIZE },
          claim_to_headers: [
            { header_name: DECISION_SID_HEADER, claim_name: DECISION_CLAIMS.sid },
            { header_name: ASSERTION_HEADER, claim_name: DECISION_CLAIMS.assertion },
            ...claimHeaders,
          ],
        },
      },
      rules: [{ match: { prefix: '/' }, requirement_name: DECISION_PROVIDER }],
      requirement_map: {
        [DECISION_PROVIDER]: {
          requires_any: {
            requirements: [{ provider_name: DECISION_PROVIDER }, { allow_missing_or_failed: {} }],
          },
        },
      },
    }),
  };
}

/**
 * The shadow RBAC filter, its config served over ADS as the ECDS resource FAST_PATH_FILTER (the
 * revocations: fast-path-rbac.ts). Until Envoy has that resource, the default config denies every
 * request, so every request asks Portcullis; it is applied at once rather than holding the listener
 * (`apply_default_config_without_warming`).
 */
export function fastPathRbacFilter(): HttpFilter {
  return {
    name: FAST_PATH_FILTER,
    config_discovery: {
      config_source: { ads: {}, resource_api_version: 'V3' },
      default_config: typed(RBAC_TYPE, denyEverything('unavailable')),
      apply_default_config_without_warming: true,
      type_urls: [`type.googleapis.com/${RBAC_TYPE}`],
    },
  };
}

/**
 * ext_authz's gate: it runs unless the shadow RBAC said `allowed` (`invert`: a missing result,
 * a denied one, or the filter switched off all ask Portcullis).
 */
export function fastPathGate(): Message<'envoy.type.matcher.v3.MetadataMatcher'> {
  return {
    filter: RBAC_METADATA_NAMESPACE,
    path: [{ key: FAST_PATH_RESULT_KEY }],
    value: { string_match: { exact: FAST_PATH_ALLOWED } },
    invert: true,
  };
}

/**
 * `compiled` (the Envoy route of `route`) named by its decision name when it has one: the shadow
 * RBAC matches that name against the token's `r` (`xds.route_name`), and the credential strip reads
 * from it whether the route sends identity headers (DECISION_NAME_IDENTITY_SUFFIX). Nothing else is
 * added per route, so the fast path costs a route table only the name's extra characters. Mutates
 * and returns `compiled`, like the other per-route settings of compileVirtualHost.
 */
export function withFastPath(compiled: Route, route: IRRoute): Route {
  if (route.decisionName !== undefined) compiled.name = route.decisionName;
  return compiled;
}

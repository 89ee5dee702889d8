import type { IR, IRAuthorize, IRInternal, IRRoute } from '../../ir/types.js';
import { typed } from '../../proto/codec.js';
import type { AnyMessage, Message } from '../../proto/messages.js';
import { ASSERTION_HEADER } from '../../contract/authz.js';
import {
  DECISION_CLAIMS,
  DECISION_CLOCK_SKEW_S,
  DECISION_PAYLOAD_KEY,
  DECISION_PROVIDER,
  DECISION_ROUTE_METADATA,
  DECISION_ROUTE_METADATA_KEY,
  DECISION_SID_HEADER,
  DECISION_TOKEN_ISSUER,
  FAST_PATH_ALLOWED,
  FAST_PATH_FILTER,
  FAST_PATH_RESULT_KEY,
  claimHeaderKey,
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
 * The claim header names a decision token carries values for, lower-cased and sorted: the one at
 * index i is the token's `h.c<i>` (contract/fast-path.ts `claimHeaderKey`).
 */
export function decisionClaimHeaders(claimHeaders: Readonly<Record<string, string>>): string[] {
  return [...new Set(Object.keys(claimHeaders).map((name) => name.toLowerCase()))].sort();
}

/**
 * jwt_authn with the one decision-token provider: the token comes from the decision cookie only
 * (never `Authorization`, which may be the upstream's own credential), is verified against the
 * decision key's public JWKS inline (no fetch), must carry `exp` (with DECISION_CLOCK_SKEW_S of
 * skew) and the issuer DECISION_TOKEN_ISSUER, and has no audience: the host binding is the route's,
 * since a decision name holds the route id, which derives from the exact host. The verified payload
 * goes to dynamic metadata (`payload_in_metadata`) for the shadow RBAC, and its `sid`, `ja` and
 * `h.c<i>` claims become the sid, assertion and claim headers. Only routes whose per-route config
 * names the requirement (`fastPathRoute`) verify anything; on the rest the filter does nothing.
 * The requirement allows a missing or failed token: such a request goes on to ext_authz.
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
 * `compiled` (the Envoy route of `route`) with its fast-path settings, when the fast path is on:
 * - a route with a decision name gets jwt_authn's requirement (the same bytes on every such route)
 *   and its decision name in its metadata, beside the identity strip's (`DECISION_ROUTE_METADATA`:
 *   what the shadow RBAC's CEL reads); when it does not pass identity headers it also removes the
 *   assertion and claim headers (`identityRemovals`), which jwt_authn sets from the token on every
 *   route of the host;
 * - a public route switches the shadow RBAC off: no decision is made there, so no result is written
 *   (and the access log's `decided_by` is empty).
 * Mutates and returns `compiled`, like the other per-route settings of compileVirtualHost.
 */
export function withFastPath(compiled: Route, route: IRRoute, identityRemovals: readonly string[]): Route {
  if (route.public) {
    compiled.typed_per_filter_config = {
      ...compiled.typed_per_filter_config,
      [FAST_PATH_FILTER]: typed('envoy.config.route.v3.FilterConfig', { disabled: true }),
    };
    return compiled;
  }
  const name = route.decisionName;
  if (name === undefined) return compiled;
  const perFilter: Record<string, AnyMessage> = {
    ...compiled.typed_per_filter_config,
    [HTTP_FILTER_JWT_AUTHN]: typed('envoy.extensions.filters.http.jwt_authn.v3.PerRouteConfig', {
      requirement_name: DECISION_PROVIDER,
    }),
  };
  compiled.typed_per_filter_config = perFilter;
  compiled.metadata = {
    filter_metadata: {
      ...compiled.metadata?.filter_metadata,
      [DECISION_ROUTE_METADATA]: { fields: { [DECISION_ROUTE_METADATA_KEY]: { stringValue: name } } },
    },
  };
  if (!route.passIdentityHeaders) {
    const own = compiled.request_headers_to_remove ?? [];
    compiled.request_headers_to_remove = [...new Set([...own, ...identityRemovals])];
  }
  return compiled;
}

/**
 * A static Envoy bootstrap for the fast-path experiments (issue 35; test/integration/
 * fast-path-envoy.test.ts): Envoy decides a repeat request itself from a signed decision token,
 * and asks ext_authz only when it cannot. Pieces in Envoy's own JSON config shape, as
 * static-envoy.ts writes them. No Portcullis runs; every name here is the experiment's own.
 */
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Bootstrap } from '../../src/envoy/bootstrap.js';
import { ROUTER_FILTER, staticHttpListener, staticLoopbackCluster } from './static-envoy.js';

/** Host of the two fast-path routes. */
export const APP_HOST = 'app.fp.test';
/** The other host, with its own audience. */
export const OTHER_HOST = 'other.fp.test';
/** Route names: route id + policy checksum, as the design names them (what `xds.route_name` reads). */
export const ROUTE_ALPHA = 'r-alpha-5f3a9c';
export const ROUTE_BETA = 'r-beta-77e0b1';
export const ROUTE_OTHER = 'r-other-c0ffee';
/** Decision token cookie, identity-assertion cookie, header jwt_authn sets from `sid`. */
export const TOKEN_COOKIE = '_portcullis_dt';
export const ASSERTION_COOKIE = '_portcullis_as';
export const SID_HEADER = 'x-portcullis-sid';
export const ASSERTION_HEADER = 'x-portcullis-jwt-assertion';
/** Token issuer. */
export const ISSUER = 'https://portcullis.fp.test';
/**
 * The ECDS resource, and the HttpFilter that names it (ECDS's resource name is the filter's name).
 * RBAC still writes its metadata under `envoy.filters.http.rbac` (the test checks it).
 */
export const RBAC_FILTER_NAME = 'portcullis-fastpath';
/** A sid no token carries: `exact_match_map` must hold at least one pair (Envoy rejects `{}`). */
export const PLACEHOLDER_SID = '-none-';
/** Echoed to the upstream from the router (after every filter ran), to observe the shadow result. */
export const SHADOW_RESULT_HEADER = 'x-fp-shadow-result';
export const SHADOW_POLICY_HEADER = 'x-fp-shadow-policy';
/** The unprefixed `shadow_engine_result`, whatever `shadow_rules_stat_prefix` says. */
export const PLAIN_RESULT_HEADER = 'x-fp-shadow-result-plain';

const RBAC_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC';
const ACTION_TYPE = 'type.googleapis.com/envoy.config.rbac.v3.Action';

const rbacAction = (name: string, action: 'ALLOW' | 'DENY'): Record<string, unknown> => ({
  action: { name, typed_config: { '@type': ACTION_TYPE, name, action } },
});

/** A CEL `Expr` node (google.api.expr / cel.expr ParsedExpr syntax), each with its own id. */
type Expr = Record<string, unknown>;
const ident = (id: number, name: string): Expr => ({ id, ident_expr: { name } });
const select = (id: number, operand: Expr, field: string): Expr => ({
  id,
  select_expr: { operand, field },
});
const str = (id: number, value: string): Expr => ({ id, const_expr: { string_value: value } });
/** `a[b]`: CEL's index operator is the call `_[_]`. */
const index = (id: number, operand: Expr, key: Expr): Expr => ({
  id,
  call_expr: { function: '_[_]', args: [operand, key] },
});

/**
 * `xds.route_name in metadata.filter_metadata['envoy.filters.http.jwt_authn']['s']['r']` as a
 * hand-built parsed AST (`cel_expr_parsed`): Envoy 1.40's CelMatcher accepts only an AST; the
 * `cel_expr_string` field parses but the matcher refuses it ("CEL expression not set").
 * - node 1: the call `@in(lhs, rhs)` (CEL's `in` operator);
 * - node 2: `xds.route_name`, a select of field `route_name` on the identifier `xds` (node 3);
 * - node 4: `…['r']` (const node 11) indexing node 5, `…['s']` (const 10) indexing node 6,
 *   `…['envoy.filters.http.jwt_authn']` (const 9) indexing node 7, which is the select
 *   `filter_metadata` on the identifier `metadata` (node 8, the request's dynamic metadata).
 */
export function routeListedExpr(): Record<string, unknown> {
  const filterMetadata = select(7, ident(8, 'metadata'), 'filter_metadata');
  const payload = index(5, index(6, filterMetadata, str(9, 'envoy.filters.http.jwt_authn')), str(10, 's'));
  return {
    expr: {
      id: 1,
      call_expr: {
        function: '@in',
        args: [select(2, ident(3, 'xds'), 'route_name'), index(4, payload, str(11, 'r'))],
      },
    },
  };
}

/** The CEL matcher `route listed`, as an xds single predicate. */
const celListed = {
  single_predicate: {
    input: {
      name: 'cel',
      typed_config: { '@type': 'type.googleapis.com/xds.type.matcher.v3.HttpAttributesCelMatchInput' },
    },
    custom_match: {
      name: 'cel',
      typed_config: {
        '@type': 'type.googleapis.com/xds.type.matcher.v3.CelMatcher',
        expr_match: { cel_expr_parsed: routeListedExpr() },
      },
    },
  },
};

/**
 * The ALLOW predicate: the route is listed and, with `requireSid`, x-portcullis-sid is present
 * (a header the input cannot read never matches a regex, so a token without `sid`, which the
 * revocation map can never catch, does not pass).
 */
function listedPredicate(requireSid: boolean): Record<string, unknown> {
  if (!requireSid) return celListed;
  const sidPresent = {
    single_predicate: {
      input: {
        name: 'sid',
        typed_config: {
          '@type': 'type.googleapis.com/envoy.type.matcher.v3.HttpRequestHeaderMatchInput',
          header_name: SID_HEADER,
        },
      },
      value_match: { safe_regex: { google_re2: {}, regex: '.+' } },
    },
  };
  return { and_matcher: { predicate: [sidPresent, celListed] } };
}

/**
 * The shadow RBAC config the ECDS resource carries: header `x-portcullis-sid` in the revoked map
 * -> DENY `revoked`; otherwise the CEL matcher `route listed` -> ALLOW `listed`; else DENY
 * `unlisted` (`requireSid`, default true: see `listedPredicate`). `statPrefix` sets `shadow_rules_stat_prefix`, which also prefixes the metadata keys.
 */
export function shadowRbac(
  revoked: readonly string[],
  options: { readonly statPrefix?: string | undefined; readonly requireSid?: boolean | undefined } = {},
): Record<string, unknown> {
  const { statPrefix } = options;
  const map: Record<string, unknown> = {};
  for (const sid of [PLACEHOLDER_SID, ...revoked]) map[sid] = rbacAction('revoked', 'DENY');
  return {
    '@type': RBAC_TYPE,
    ...(statPrefix === undefined ? {} : { shadow_rules_stat_prefix: statPrefix }),
    shadow_matcher: {
      matcher_tree: {
        input: {
          name: 'sid',
          typed_config: {
            '@type': 'type.googleapis.com/envoy.type.matcher.v3.HttpRequestHeaderMatchInput',
            header_name: SID_HEADER,
          },
        },
        exact_match_map: { map },
      },
      on_no_match: {
        matcher: {
          matcher_list: {
            matchers: [
              {
                predicate: listedPredicate(options.requireSid ?? true),
                on_match: rbacAction('listed', 'ALLOW'),
              },
            ],
          },
          on_no_match: rbacAction('unlisted', 'DENY'),
        },
      },
    },
  };
}

/**
 * Writes the ECDS file (a DiscoveryResponse holding one TypedExtensionConfig) the way Envoy's
 * `path_config_source` with `watched_directory` wants it: to a temporary name, then an atomic
 * rename into place, which is the move Envoy's directory watch reacts to.
 */
export async function writeEcdsFile(
  dir: string,
  version: string,
  rbac: Record<string, unknown>,
): Promise<void> {
  const body = {
    version_info: version,
    resources: [
      {
        '@type': 'type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig',
        name: RBAC_FILTER_NAME,
        typed_config: rbac,
      },
    ],
  };
  const temporary = join(dir, `.rbac-${version}.tmp`);
  await writeFile(temporary, JSON.stringify(body));
  await rename(temporary, ecdsPath(dir));
}

/** Where the ECDS file lives in `dir`. */
export function ecdsPath(dir: string): string {
  return join(dir, 'rbac.json');
}

/** Inputs to `fastPathBootstrap`. */
export interface FastPathOptions {
  readonly listenPort: number;
  readonly upstreamPort: number;
  readonly authzPort: number;
  /** The public JWK set (JSON) jwt_authn trusts. */
  readonly jwks: string;
  /** Directory holding the ECDS file (`writeEcdsFile` first). */
  readonly ecdsDir: string;
  /** `shadow_rules_stat_prefix` of the filter's default config and of ext_authz's metadata key. */
  readonly statPrefix?: string;
  /** Both providers accept both hosts' audiences (the mistake the per-host binding avoids). */
  readonly sharedAudience?: boolean;
  /** Drop a client's x-portcullis-sid in the HCM's early header mutation (default true). */
  readonly earlyStrip?: boolean;
  /** `requireSid` of the default config. */
  readonly requireSid?: boolean;
}

/** jwt_authn: one provider per host (its audience), chosen per virtual host, failures allowed. */
function jwtAuthn(jwks: string, sharedAudience: boolean): Record<string, unknown> {
  const provider = (audience: string): Record<string, unknown> => ({
    issuer: ISSUER,
    audiences: sharedAudience ? [APP_HOST, OTHER_HOST] : [audience],
    local_jwks: { inline_string: jwks },
    from_cookies: [TOKEN_COOKIE],
    payload_in_metadata: 's',
    claim_to_headers: [{ header_name: SID_HEADER, claim_name: 'sid' }],
    clock_skew_seconds: 5,
    jwt_cache_config: { jwt_cache_size: 100 },
  });
  const requirement = (provider: string): Record<string, unknown> => ({
    requires_any: { requirements: [{ provider_name: provider }, { allow_missing_or_failed: {} }] },
  });
  return {
    name: 'envoy.filters.http.jwt_authn',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication',
      providers: { app: provider(APP_HOST), other: provider(OTHER_HOST) },
      requirement_map: { app: requirement('app'), other: requirement('other') },
    },
  };
}

const jwtRequirement = (name: string): Record<string, unknown> => ({
  'envoy.filters.http.jwt_authn': {
    '@type': 'type.googleapis.com/envoy.extensions.filters.http.jwt_authn.v3.PerRouteConfig',
    requirement_name: name,
  },
});

/** Per-route header_mutation: the assertion header from the cookie copied into metadata. */
const assertionMutation = {
  'envoy.filters.http.header_mutation': {
    '@type': 'type.googleapis.com/envoy.extensions.filters.http.header_mutation.v3.HeaderMutationPerRoute',
    mutations: {
      request_mutations: [
        {
          append: {
            header: { key: ASSERTION_HEADER, value: '%DYNAMIC_METADATA(portcullis:as)%' },
            append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
          },
        },
      ],
    },
  },
};

function route(name: string, prefix: string, host: string): Record<string, unknown> {
  return {
    name,
    match: { prefix },
    route: { cluster: 'upstream', timeout: '5s' },
    typed_per_filter_config: { ...jwtRequirement(host === APP_HOST ? 'app' : 'other'), ...assertionMutation },
  };
}

/** The HTTP filters in order (see the test file's header for why each is there). */
function httpFilters(options: FastPathOptions): Record<string, unknown>[] {
  const resultKey = `${options.statPrefix ?? ''}shadow_engine_result`;
  return [
    jwtAuthn(options.jwks, options.sharedAudience ?? false),
    {
      name: 'envoy.filters.http.header_to_metadata',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.filters.http.header_to_metadata.v3.Config',
        request_rules: [
          {
            cookie: ASSERTION_COOKIE,
            on_header_present: { metadata_namespace: 'portcullis', key: 'as', type: 'STRING' },
          },
        ],
      },
    },
    {
      name: RBAC_FILTER_NAME,
      config_discovery: {
        config_source: {
          path_config_source: {
            path: ecdsPath(options.ecdsDir),
            watched_directory: { path: options.ecdsDir },
          },
          resource_api_version: 'V3',
        },
        // Until the file's resource arrives: nothing is "allowed", so ext_authz runs.
        default_config: shadowRbac([], { statPrefix: options.statPrefix, requireSid: options.requireSid }),
        apply_default_config_without_warming: true,
        type_urls: [RBAC_TYPE],
      },
    },
    {
      name: 'envoy.filters.http.header_mutation',
      // Off by default; the protected routes switch it on with their per-route mutations.
      disabled: true,
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.filters.http.header_mutation.v3.HeaderMutation',
      },
    },
    {
      name: 'envoy.filters.http.ext_authz',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz',
        transport_api_version: 'V3',
        grpc_service: { envoy_grpc: { cluster_name: 'authz' }, timeout: '2s' },
        failure_mode_allow: false,
        filter_enabled_metadata: {
          filter: 'envoy.filters.http.rbac',
          path: [{ key: resultKey }],
          value: { string_match: { exact: 'allowed' } },
          invert: true,
        },
      },
    },
    ROUTER_FILTER,
  ];
}

/**
 * The whole static bootstrap: admin on port 0, one listener on `listenPort` whose HCM first drops
 * any client-sent `x-portcullis-sid` (early header mutation, before routing and every filter),
 * the filter chain above, and routes alpha (`/alpha`) and beta (`/beta`) on `APP_HOST` and one on
 * `OTHER_HOST`. The router echoes the RBAC shadow result and policy to the upstream as headers.
 */
export function fastPathBootstrap(options: FastPathOptions): Bootstrap {
  const prefix = options.statPrefix ?? '';
  return {
    // A path (file) config source needs a node id and cluster, like any xDS subscription.
    node: { id: 'fast-path-test', cluster: 'fast-path-test' },
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      clusters: [
        staticLoopbackCluster('upstream', options.upstreamPort),
        staticLoopbackCluster('authz', options.authzPort, {
          typed_extension_protocol_options: {
            'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
              '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
              explicit_http_config: { http2_protocol_options: {} },
            },
          },
        }),
      ],
      listeners: [
        staticHttpListener('fastpath', options.listenPort, {
          stat_prefix: 'fastpath',
          early_header_mutation_extensions: [
            {
              name: 'envoy.http.early_header_mutation.header_mutation',
              typed_config: {
                '@type':
                  'type.googleapis.com/envoy.extensions.http.early_header_mutation.header_mutation.v3.HeaderMutation',
                mutations: [{ remove: options.earlyStrip === false ? 'x-fp-nothing' : SID_HEADER }],
              },
            },
          ],
          route_config: {
            name: 'fastpath',
            request_headers_to_add: [
              {
                header: {
                  key: SHADOW_RESULT_HEADER,
                  value: `%DYNAMIC_METADATA(envoy.filters.http.rbac:${prefix}shadow_engine_result)%`,
                },
                append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
              },
              {
                header: {
                  key: PLAIN_RESULT_HEADER,
                  value: '%DYNAMIC_METADATA(envoy.filters.http.rbac:shadow_engine_result)%',
                },
                append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
              },
              {
                header: {
                  key: SHADOW_POLICY_HEADER,
                  value: `%DYNAMIC_METADATA(envoy.filters.http.rbac:${prefix}shadow_effective_policy_id)%`,
                },
                append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
              },
            ],
            virtual_hosts: [
              {
                name: 'app',
                domains: [APP_HOST],
                routes: [route(ROUTE_ALPHA, '/alpha', APP_HOST), route(ROUTE_BETA, '/beta', APP_HOST)],
              },
              { name: 'other', domains: [OTHER_HOST], routes: [route(ROUTE_OTHER, '/', OTHER_HOST)] },
            ],
          },
          http_filters: httpFilters(options),
        }),
      ],
    },
  };
}

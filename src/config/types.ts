/**
 * The typed, validated configuration: what parsing produces and translation consumes. Field names
 * are the config-file keys, so a key path in an error is also the place in this type. Secrets are
 * wrapped in Secret so that logging a Config never prints them.
 */
import type { LogLevel } from '../shared/logger.js';
import type { PolicyRule, PolicyValue } from './policy-types.js';
import type { Secret } from '../shared/secret.js';

export const LB_POLICIES = ['ROUND_ROBIN', 'LEAST_REQUEST', 'RING_HASH', 'RANDOM', 'MAGLEV'] as const;
export type LoadBalancingPolicy = (typeof LB_POLICIES)[number];

/**
 * One `to` destination with its optional weight (`http://a:8080,3`), and the parts of its URL that
 * translation reads, with the scheme's default port and an empty path resolved.
 */
export interface WeightedUrl {
  readonly url: URL;
  readonly weight: number | undefined;
  /** `url.href`. */
  readonly href: string;
  /** `url.protocol`, such as `https:`. */
  readonly protocol: string;
  /** `url.hostname` (IPv6 in brackets). */
  readonly hostname: string;
  /** The URL's port, else its scheme's (443 for https, 80 otherwise). */
  readonly port: number;
  /** `url.pathname`; `/` where it is empty (an h2c:// URL without a path). */
  readonly pathname: string;
}

/** A validated active health check, in Envoy's terms (milliseconds for durations). */
export interface HealthCheckSettings {
  readonly timeout_ms: number;
  readonly interval_ms: number;
  readonly unhealthy_threshold: number;
  readonly healthy_threshold: number;
  readonly initial_jitter_ms?: number;
  readonly interval_jitter_ms?: number;
  readonly unhealthy_interval_ms?: number;
  readonly no_traffic_interval_ms?: number;
  readonly reuse_connection?: boolean;
  readonly http?: {
    readonly path: string;
    readonly host?: string;
    readonly expected_statuses?: readonly { start: number; end: number }[];
    readonly codec_client_type?: 'HTTP1' | 'HTTP2';
  };
  readonly tcp?: { readonly send?: string; readonly receive?: readonly string[] };
  readonly grpc?: { readonly service_name?: string; readonly authority?: string };
}

/** A validated outlier-detection block: only the keys the user set (Envoy defaults the rest). */
export type OutlierDetectionSettings = Readonly<Record<string, number | boolean>>;

/** A redirect answered by Envoy instead of forwarding (`routes[i].redirect`). */
export interface RedirectSettings {
  readonly https_redirect?: boolean;
  readonly scheme_redirect?: string;
  readonly host_redirect?: string;
  readonly port_redirect?: number;
  readonly path_redirect?: string;
  readonly prefix_rewrite?: string;
  /** 301, 302, 303, 307 or 308; Envoy's default is 301. */
  readonly response_code?: 301 | 302 | 303 | 307 | 308;
  readonly strip_query?: boolean;
}

/** A fixed response answered by Envoy (`routes[i].response`). */
export interface DirectResponseSettings {
  readonly status: number;
  readonly body: string;
}

/** One `rewrite_response_headers` rule: a response header's value starting with `prefix` gets `value` instead. */
export interface ResponseHeaderRewriteSettings {
  /** As written; matched case-insensitively. */
  readonly header: string;
  readonly prefix: string;
  readonly value: string;
}

/** One route, as written under `routes` (or the older `policy`). */
export interface RouteSettings {
  /** `http` routes proxy HTTP; `tcp` routes (from `tcp+https://host:port`) tunnel TCP over CONNECT. */
  readonly kind: 'http' | 'tcp';
  readonly from: URL;
  /** `from.href`, and `from`'s host name, lower-cased (what hosts group by and route ids hash). */
  readonly from_href: string;
  readonly from_host: string;
  /** Destinations; empty when the route answers with `redirect` or `response`. */
  readonly to: readonly WeightedUrl[];
  readonly redirect?: RedirectSettings;
  readonly response?: DirectResponseSettings;
  readonly name?: string;
  readonly prefix?: string;
  readonly path?: string;
  readonly regex?: string;
  readonly prefix_rewrite?: string;
  readonly regex_rewrite_pattern?: string;
  readonly regex_rewrite_substitution?: string;
  readonly load_balancing_policy: LoadBalancingPolicy;
  readonly health_checks: readonly HealthCheckSettings[];
  readonly outlier_detection?: OutlierDetectionSettings;
  readonly healthy_panic_threshold?: number;
  readonly timeout_ms?: number;
  readonly idle_timeout_ms?: number;
  readonly allow_websockets: boolean;
  readonly set_request_headers: Readonly<Record<string, string>>;
  readonly remove_request_headers: readonly string[];
  /**
   * Client-sent identity headers (src/shared/identity-headers.ts) this route lets through,
   * lower case; every other one is stripped. Unset: none.
   */
  readonly pass_request_identity_headers?: readonly string[];
  readonly set_response_headers: Readonly<Record<string, string>>;
  /** Prefix rewrites of the upstream's response headers, in order; unset when none. */
  readonly rewrite_response_headers?: readonly ResponseHeaderRewriteSettings[];
  readonly preserve_host_header: boolean;
  readonly host_rewrite?: string;
  readonly tls_skip_verify: boolean;
  /** Forwarding to link-local, metadata or Portcullis's own addresses is allowed (check-upstream-targets.ts). */
  readonly allow_restricted_upstream: boolean;
  readonly tls_server_name?: string;
  readonly tls_custom_ca_pem?: string;
  readonly tls_client_cert_pem?: string;
  readonly tls_client_key_pem?: string;
  readonly allow_public_unauthenticated_access: boolean;
  readonly allow_any_authenticated_user: boolean;
  readonly cors_allow_preflight: boolean;
  readonly allowed_users: readonly string[];
  readonly allowed_domains: readonly string[];
  /** Claim name -> accepted values (any one matches). */
  readonly allowed_idp_claims: Readonly<Record<string, readonly PolicyValue[]>>;
  /** The embedded policy rules, validated; the access shortcuts above are not folded in here. */
  readonly policy: readonly PolicyRule[];
  /** Per-route override of the global `pass_identity_headers`; unset means the global value. */
  readonly pass_identity_headers?: boolean;
  /** Per-route identity-provider credentials (both or neither). */
  readonly idp_client_id?: string;
  readonly idp_client_secret?: Secret<string>;
  /** `identity_provider`: a name of `identity_providers`; unset (or `default`) means the global `idp_*` one. */
  readonly identity_provider?: string;
  /** Where the route sits in the file (`routes[3]`), for messages. */
  readonly source_path: string;
}

/**
 * One entry of `identity_providers`: the same settings as the global `idp_*` keys, complete on its
 * own (a provider, a client and its secret), so a route naming it needs nothing global but the
 * authenticate service URL.
 */
export interface NamedIdentityProvider {
  readonly provider: IdpProvider;
  /** The discovery base URL, without `/.well-known/openid-configuration`. */
  readonly provider_url?: URL;
  readonly client_id: string;
  readonly client_secret: Secret<string>;
  /** As set; undefined means the provider's defaults. */
  readonly scopes?: readonly string[];
  readonly request_params: Readonly<Record<string, string>>;
  readonly trust_unverified_email: boolean;
}

export { SERVICE_NAMES, type ServiceName } from '../shared/service-names.js';
import type { ServiceName } from '../shared/service-names.js';

export { IDP_PROVIDERS, type IdpProvider } from '../shared/idp-providers.js';
import type { IdpProvider } from '../shared/idp-providers.js';

/** A validated identity-assertion signing key: PEM text (first block signs) and its JWS algorithm. */
export interface SigningKey {
  /** Every key's PEM block, the signing key first (the rest are published for verification only). */
  readonly pem: Secret<string>;
  /** The same keys, one PEM block each, in order. */
  readonly blocks: Secret<readonly string[]>;
  readonly algorithm: 'ES256' | 'ES384' | 'ES512' | 'RS256';
}

/** The whole configuration. */
export interface Config {
  /** Services this process runs; `all` is expanded. */
  readonly services: readonly ServiceName[];
  /** True when every service runs in this process (`services: all`, the default). */
  readonly all_in_one: boolean;
  /**
   * The authenticate service's public URL (an origin: no path). Undefined only when no route needs
   * a signed-in user: validation refuses such a route without it (no hosted service exists).
   */
  readonly authenticate_service_url?: URL;
  readonly authenticate_internal_service_url?: URL;
  readonly authenticate_callback_path: string;
  readonly authorize_service_url?: URL;
  /**
   * Where this proxy's Envoy sends ext_authz Checks when that is not where this process reaches
   * authorize: a sidecar Envoy in another container reaching an in-process authorize.
   */
  readonly authorize_internal_service_url?: URL;
  readonly databroker_service_url?: URL;
  readonly signout_redirect_url?: URL;
  /** 32 bytes; undefined only in all-in-one mode, where the reload loop generates one at start. */
  readonly shared_secret?: Secret<Buffer>;
  /** 32 bytes; undefined only in all-in-one mode, where the reload loop generates one at start. */
  readonly cookie_secret?: Secret<Buffer>;
  readonly cookie_name: string;
  readonly cookie_domain?: string;
  readonly cookie_expire_ms: number;
  readonly cookie_http_only: boolean;
  readonly cookie_same_site: '' | 'strict' | 'lax' | 'none';
  /** Set when `idp_provider` or `idp_provider_url` is (`oidc` when only the URL was given). */
  readonly idp_provider?: IdpProvider;
  /** The discovery base URL, without `/.well-known/openid-configuration`. */
  readonly idp_provider_url?: URL;
  readonly idp_client_id?: string;
  readonly idp_client_secret?: Secret<string>;
  /** `idp_scopes` as set; undefined means the provider's defaults. */
  readonly idp_scopes?: readonly string[] | undefined;
  readonly idp_request_params: Readonly<Record<string, string>>;
  /** Unverified addresses count for address policies (`idp_trust_unverified_email`). */
  readonly idp_trust_unverified_email: boolean;
  /** `identity_providers`: named providers routes may choose (`identity_provider`); absent: none. */
  readonly identity_providers?: Readonly<Record<string, NamedIdentityProvider>>;
  readonly signing_key?: SigningKey;
  /** Header name -> claim name. */
  readonly jwt_claims_headers: Readonly<Record<string, string>>;
  /** Groups the identity assertion may carry; undefined keeps every group. */
  readonly jwt_groups_filter?: readonly string[];
  readonly jwt_issuer_format: 'host_only' | 'uri';
  readonly pass_identity_headers: boolean;
  /** Host names as `URL.hostname` writes them (lower case, IPv6 in brackets); see host-name.ts. */
  readonly programmatic_redirect_domain_whitelist: readonly string[];
  readonly address: string;
  readonly insecure_server: boolean;
  readonly use_proxy_protocol: boolean;
  readonly xff_num_trusted_hops: number;
  readonly log_level: LogLevel | 'silent';
  readonly proxy_log_level?: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'critical' | 'off';
  readonly grpc_address: string;
  /** A non-loopback `grpc_address` without TLS was allowed explicitly (validated at parse). */
  readonly grpc_insecure: boolean;
  readonly grpc_client_timeout_ms: number;
  /** Bound on one ext_authz Check (Envoy's `grpc_service.timeout`); 0 means the default. */
  readonly authorize_timeout_ms: number;
  /** `decision_token_lifetime`: how long Envoy may replay an allow (the fast path); 0 turns it off. */
  readonly decision_token_lifetime_ms: number;
  readonly envoy_admin_address: string;
  readonly metrics_address?: string;
  /** `user:password` (decoded from base64) that `/metrics` requires, when set. */
  readonly metrics_basic_auth?: Secret<string>;
  readonly tracing_sampling_rate: number;
  readonly otel_exporter_otlp_endpoint?: URL;
  readonly otel_exporter_otlp_protocol: 'grpc' | 'http/protobuf';
  /** The plain-HTTP listener that redirects every request to HTTPS, when set. */
  readonly http_redirect_addr?: string;
  readonly default_upstream_timeout_ms: number;
  readonly timeout_read_ms: number;
  readonly timeout_idle_ms: number;
  readonly set_response_headers?: Readonly<Record<string, string>>;
  readonly certificates: readonly { certPem: string; keyPem: string }[];
  readonly certificate_authority_pem?: string;
  /**
   * The DNS name of the internal TLS derived from `shared_secret`: when set, the gRPC listener and
   * Portcullis's own HTTP endpoints serve TLS and internal clients verify against the derived CA.
   */
  readonly tls_derive?: string;
  readonly databroker_storage_type: 'memory' | 'redis';
  readonly databroker_storage_connection_string?: Secret<string>;
  /** How long cached sessions keep working while the session store is unreachable. */
  readonly databroker_outage_grace_ms: number;
  readonly routes: readonly RouteSettings[];
}

/**
 * The typed, validated configuration: what parsing produces and translation consumes. Field names
 * are the config-file keys, so a key path in an error is also the place in this type.
 */
export const LB_POLICIES = ['ROUND_ROBIN', 'LEAST_REQUEST', 'RING_HASH', 'RANDOM', 'MAGLEV'] as const;
export type LoadBalancingPolicy = (typeof LB_POLICIES)[number];

/** One `to` destination with its optional weight (`http://a:8080,3`). */
export interface WeightedUrl {
  readonly url: URL;
  readonly weight: number | undefined;
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

/** One route, as written under `routes` (or the older `policy`). */
export interface RouteSettings {
  readonly from: URL;
  readonly to: readonly WeightedUrl[];
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
  readonly set_response_headers: Readonly<Record<string, string>>;
  readonly preserve_host_header: boolean;
  readonly host_rewrite?: string;
  readonly tls_skip_verify: boolean;
  readonly tls_server_name?: string;
  readonly tls_custom_ca_pem?: string;
  readonly tls_client_cert_pem?: string;
  readonly tls_client_key_pem?: string;
  readonly allow_public_unauthenticated_access: boolean;
  /** Where the route sits in the file (`routes[3]`), for messages. */
  readonly source_path: string;
}

/** The whole configuration. */
export interface Config {
  readonly address: string;
  readonly insecure_server: boolean;
  readonly use_proxy_protocol: boolean;
  readonly xff_num_trusted_hops: number;
  readonly log_level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';
  readonly grpc_address: string;
  readonly envoy_admin_address: string;
  readonly default_upstream_timeout_ms: number;
  readonly timeout_read_ms: number;
  readonly timeout_idle_ms: number;
  readonly set_response_headers?: Readonly<Record<string, string>>;
  readonly certificates: readonly { certPem: string; keyPem: string }[];
  readonly routes: readonly RouteSettings[];
}

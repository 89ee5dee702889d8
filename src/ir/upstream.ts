/**
 * The IR's upstream settings: load balancing, active health checks and outlier detection of a
 * route's cluster, in Envoy's terms (milliseconds for durations). The IR owns these types so that
 * compile never sees config types; their shapes are those of the config's validated settings,
 * which translate copies in.
 */

/** Envoy's cluster load-balancing policies that routes may choose. */
export type LoadBalancingPolicy = 'ROUND_ROBIN' | 'LEAST_REQUEST' | 'RING_HASH' | 'RANDOM' | 'MAGLEV';

/** One active health check. */
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
    readonly expected_statuses?: readonly { readonly start: number; readonly end: number }[];
    readonly codec_client_type?: 'HTTP1' | 'HTTP2';
  };
  readonly tcp?: { readonly send?: string; readonly receive?: readonly string[] };
  readonly grpc?: { readonly service_name?: string; readonly authority?: string };
}

/** Outlier detection: only the keys the user set, by Envoy's field name (Envoy defaults the rest). */
export type OutlierDetectionSettings = Readonly<Record<string, number | boolean>>;

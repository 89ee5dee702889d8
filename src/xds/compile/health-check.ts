import type { IRCluster } from '../../ir/types.js';
import { durationMs, wrapped } from '../../proto/codec.js';
import type { Message } from '../../proto/messages.js';

/** One health check of an IR cluster. */
type HealthCheckSettings = IRCluster['healthChecks'][number];

/**
 * IR health check -> Envoy `config.core.v3.HealthCheck`. TCP payloads are hex, as Envoy's `text`
 * field. An unset `no_traffic_interval` follows `interval` (Envoy's default is 60 s).
 */
export function compileHealthCheck(check: HealthCheckSettings): Message<'envoy.config.core.v3.HealthCheck'> {
  const out: Message<'envoy.config.core.v3.HealthCheck'> = {
    timeout: durationMs(check.timeout_ms),
    interval: durationMs(check.interval_ms),
    unhealthy_threshold: wrapped(check.unhealthy_threshold),
    healthy_threshold: wrapped(check.healthy_threshold),
  };
  if (check.initial_jitter_ms !== undefined) out.initial_jitter = durationMs(check.initial_jitter_ms);
  if (check.interval_jitter_ms !== undefined) out.interval_jitter = durationMs(check.interval_jitter_ms);
  if (check.unhealthy_interval_ms !== undefined)
    out.unhealthy_interval = durationMs(check.unhealthy_interval_ms);
  // Envoy checks a cluster that never had traffic only every 60 s by default, so a dead upstream
  // would go unnoticed for a minute after start-up; unless set, use `interval` there too.
  out.no_traffic_interval = durationMs(check.no_traffic_interval_ms ?? check.interval_ms);
  if (check.reuse_connection !== undefined) out.reuse_connection = wrapped(check.reuse_connection);
  if (check.http !== undefined) {
    const http: Message<'envoy.config.core.v3.HealthCheck.HttpHealthCheck'> = { path: check.http.path };
    if (check.http.host !== undefined) http.host = check.http.host;
    if (check.http.expected_statuses !== undefined)
      http.expected_statuses = check.http.expected_statuses.map((r) => ({ ...r }));
    if (check.http.codec_client_type !== undefined) http.codec_client_type = check.http.codec_client_type;
    out.http_health_check = http;
  } else if (check.tcp !== undefined) {
    const tcp: Message<'envoy.config.core.v3.HealthCheck.TcpHealthCheck'> = {};
    if (check.tcp.send !== undefined) tcp.send = { text: check.tcp.send };
    if (check.tcp.receive !== undefined) tcp.receive = check.tcp.receive.map((text) => ({ text }));
    out.tcp_health_check = tcp;
  } else if (check.grpc !== undefined) {
    out.grpc_health_check = { ...check.grpc };
  }
  return out;
}

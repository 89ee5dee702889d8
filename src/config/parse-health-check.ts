import type { HealthCheckSettings } from './types.js';
import { isPlainObject, type Reader } from './value-readers.js';

const COMMON_KEYS = [
  'timeout',
  'interval',
  'unhealthy_threshold',
  'healthy_threshold',
  'initial_jitter',
  'interval_jitter',
  'unhealthy_interval',
  'no_traffic_interval',
  'reuse_connection',
  'http_health_check',
  'tcp_health_check',
  'grpc_health_check',
];
const HTTP_KEYS = ['path', 'host', 'expected_statuses', 'codec_client_type'];
const TCP_KEYS = ['send', 'receive'];
const GRPC_KEYS = ['service_name', 'authority'];

/**
 * Validates one `health_checks[i]` entry before Envoy sees it. Envoy requires timeout, interval and
 * both thresholds and exactly one checker; an HTTP check needs a path starting with `/`, and
 * expected status ranges are half-open `[start, end)` within 100..600. Every problem is recorded
 * with its key path; an entry with problems yields undefined.
 */
export function parseHealthCheck(
  reader: Reader,
  path: string,
  raw: unknown,
): HealthCheckSettings | undefined {
  if (!isPlainObject(raw)) return reader.problem(path, 'expected a health check map');
  const before = reader.problems.length;
  rejectUnknown(reader, path, raw, COMMON_KEYS);
  const required = (key: string): unknown =>
    raw[key] === undefined ? reader.problem(`${path}.${key}`, 'is required') : raw[key];
  const timeout = required('timeout');
  const interval = required('interval');
  const unhealthy = required('unhealthy_threshold');
  const healthy = required('healthy_threshold');
  const check: Record<string, unknown> = {
    timeout_ms:
      timeout === undefined ? undefined : reader.duration(`${path}.timeout`, timeout, { allowZero: false }),
    interval_ms:
      interval === undefined
        ? undefined
        : reader.duration(`${path}.interval`, interval, { allowZero: false }),
    unhealthy_threshold:
      unhealthy === undefined ? undefined : reader.integer(`${path}.unhealthy_threshold`, unhealthy, 1, 1000),
    healthy_threshold:
      healthy === undefined ? undefined : reader.integer(`${path}.healthy_threshold`, healthy, 1, 1000),
  };
  for (const key of ['initial_jitter', 'interval_jitter', 'unhealthy_interval', 'no_traffic_interval']) {
    if (raw[key] !== undefined) check[`${key}_ms`] = reader.duration(`${path}.${key}`, raw[key]);
  }
  if (raw.reuse_connection !== undefined)
    check.reuse_connection = reader.bool(`${path}.reuse_connection`, raw.reuse_connection);
  const kinds = ['http_health_check', 'tcp_health_check', 'grpc_health_check'].filter(
    (key) => raw[key] !== undefined,
  );
  if (kinds.length !== 1) {
    reader.problem(
      path,
      `set exactly one of http_health_check, tcp_health_check, grpc_health_check (found ${kinds.length})`,
    );
  } else if (kinds[0] === 'http_health_check') {
    check.http = parseHttp(reader, `${path}.http_health_check`, raw.http_health_check);
  } else if (kinds[0] === 'tcp_health_check') {
    check.tcp = parseTcp(reader, `${path}.tcp_health_check`, raw.tcp_health_check);
  } else {
    check.grpc = parseGrpc(reader, `${path}.grpc_health_check`, raw.grpc_health_check);
  }
  if (reader.problems.length !== before) return undefined;
  return dropUndefined(check) as unknown as HealthCheckSettings;
}

function parseHttp(reader: Reader, path: string, raw: unknown): HealthCheckSettings['http'] {
  if (!isPlainObject(raw)) return reader.problem(path, 'expected a map with at least `path`');
  rejectUnknown(reader, path, raw, HTTP_KEYS);
  const checkPath =
    raw.path === undefined
      ? reader.problem(`${path}.path`, 'is required')
      : reader.string(`${path}.path`, raw.path);
  if (checkPath !== undefined && !checkPath.startsWith('/'))
    reader.problem(`${path}.path`, `must start with "/", got "${checkPath}"`);
  const out: Record<string, unknown> = { path: checkPath };
  if (raw.host !== undefined) out.host = reader.string(`${path}.host`, raw.host);
  if (raw.codec_client_type !== undefined) {
    out.codec_client_type = reader.oneOf(`${path}.codec_client_type`, raw.codec_client_type, [
      'HTTP1',
      'HTTP2',
    ] as const);
  }
  if (raw.expected_statuses !== undefined) {
    if (!Array.isArray(raw.expected_statuses)) {
      reader.problem(`${path}.expected_statuses`, 'expected a list of {start, end} ranges');
    } else {
      out.expected_statuses = raw.expected_statuses.map((range, index) =>
        parseRange(reader, `${path}.expected_statuses[${index}]`, range),
      );
    }
  }
  return dropUndefined(out) as unknown as HealthCheckSettings['http'];
}

function parseRange(reader: Reader, path: string, raw: unknown): { start: number; end: number } | undefined {
  if (!isPlainObject(raw)) return reader.problem(path, 'expected {start, end}');
  rejectUnknown(reader, path, raw, ['start', 'end']);
  const start = reader.integer(`${path}.start`, raw.start, 100, 599);
  const end = reader.integer(`${path}.end`, raw.end, 101, 600);
  if (start !== undefined && end !== undefined && start >= end) {
    return reader.problem(
      path,
      `start (${start}) must be below end (${end}); ranges are half-open [start, end)`,
    );
  }
  return start === undefined || end === undefined ? undefined : { start, end };
}

function parseTcp(reader: Reader, path: string, raw: unknown): HealthCheckSettings['tcp'] {
  if (!isPlainObject(raw)) return reader.problem(path, 'expected a map (use {} for a connect-only check)');
  rejectUnknown(reader, path, raw, TCP_KEYS);
  const out: Record<string, unknown> = {};
  if (raw.send !== undefined) out.send = reader.string(`${path}.send`, raw.send);
  if (raw.receive !== undefined) out.receive = reader.stringList(`${path}.receive`, raw.receive);
  return dropUndefined(out) as HealthCheckSettings['tcp'];
}

function parseGrpc(reader: Reader, path: string, raw: unknown): HealthCheckSettings['grpc'] {
  if (!isPlainObject(raw)) return reader.problem(path, 'expected a map (use {} to check the whole server)');
  rejectUnknown(reader, path, raw, GRPC_KEYS);
  const out: Record<string, unknown> = {};
  if (raw.service_name !== undefined)
    out.service_name = reader.string(`${path}.service_name`, raw.service_name);
  if (raw.authority !== undefined) out.authority = reader.string(`${path}.authority`, raw.authority);
  return dropUndefined(out) as HealthCheckSettings['grpc'];
}

/** Records a problem for every key of `raw` that is not in `known`, listing the accepted keys. */
export function rejectUnknown(
  reader: Reader,
  path: string,
  raw: Record<string, unknown>,
  known: readonly string[],
): void {
  for (const key of Object.keys(raw)) {
    if (!known.includes(key))
      reader.problem(`${path}.${key}`, `unknown key; accepted keys are ${known.join(', ')}`);
  }
}

/** Copy of `object` without its undefined members (for exactOptionalPropertyTypes). */
export function dropUndefined(object: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const key of Object.keys(object)) if (object[key] !== undefined) kept[key] = object[key];
  return kept;
}

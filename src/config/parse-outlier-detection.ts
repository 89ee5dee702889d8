import type { OutlierDetectionSettings } from './types.js';
import { rejectUnknown } from './parse-health-check.js';
import { isPlainObject, type Reader } from './value-readers.js';

type FieldType = 'count' | 'percent' | 'duration' | 'bool';

/** Envoy's `cluster.v3.OutlierDetection` fields the user may set, with their value kinds. */
export const OUTLIER_FIELDS: Readonly<Record<string, FieldType>> = {
  consecutive_5xx: 'count',
  consecutive_gateway_failure: 'count',
  consecutive_local_origin_failure: 'count',
  interval: 'duration',
  base_ejection_time: 'duration',
  max_ejection_time: 'duration',
  max_ejection_time_jitter: 'duration',
  max_ejection_percent: 'percent',
  enforcing_consecutive_5xx: 'percent',
  enforcing_consecutive_gateway_failure: 'percent',
  enforcing_consecutive_local_origin_failure: 'percent',
  enforcing_success_rate: 'percent',
  enforcing_local_origin_success_rate: 'percent',
  enforcing_failure_percentage: 'percent',
  enforcing_failure_percentage_local_origin: 'percent',
  success_rate_minimum_hosts: 'count',
  success_rate_request_volume: 'count',
  success_rate_stdev_factor: 'count',
  failure_percentage_threshold: 'percent',
  failure_percentage_minimum_hosts: 'count',
  failure_percentage_request_volume: 'count',
  split_external_local_origin_errors: 'bool',
  successful_active_health_check_uneject_host: 'bool',
  always_eject_one_host: 'bool',
};

/**
 * Validates `outlier_detection`. `{}` is valid and means Envoy's defaults. Durations become
 * milliseconds (keys suffixed `_ms`), percentages must be 0..100, intervals above zero.
 */
export function parseOutlierDetection(
  reader: Reader,
  path: string,
  raw: unknown,
): OutlierDetectionSettings | undefined {
  if (!isPlainObject(raw))
    return reader.problem(path, "expected a map of Envoy's outlier detection fields ({} for defaults)");
  const before = reader.problems.length;
  rejectUnknown(reader, path, raw, Object.keys(OUTLIER_FIELDS));
  const out: Record<string, number | boolean> = {};
  for (const [key, value] of Object.entries(raw)) {
    const type = OUTLIER_FIELDS[key];
    const keyPath = `${path}.${key}`;
    let parsed: number | boolean | undefined;
    if (type === 'count') parsed = reader.integer(keyPath, value, 0, 4_294_967_295);
    else if (type === 'percent') parsed = reader.integer(keyPath, value, 0, 100);
    else if (type === 'bool') parsed = reader.bool(keyPath, value);
    else if (type === 'duration') {
      parsed = reader.duration(keyPath, value, { allowZero: false });
      if (parsed !== undefined) {
        out[`${key}_ms`] = parsed;
        continue;
      }
    }
    if (parsed !== undefined) out[key] = parsed;
  }
  return reader.problems.length === before ? out : undefined;
}

import type { IRCluster } from '../../ir/types.js';
import { durationMs, wrapped } from '../../proto/codec.js';
import type { Message } from '../../proto/messages.js';

/** An IR cluster's outlier detection settings (Envoy field names, `_ms` for durations). */
type OutlierDetectionSettings = NonNullable<IRCluster['outlierDetection']>;

/**
 * The fields of Envoy's `cluster.v3.OutlierDetection` that config accepts and that are a plain
 * `bool` on the wire; every other one is a Duration (its IR key ends in `_ms`) or a wrapper
 * (`google.protobuf.UInt32Value`, `BoolValue`). Written here, not read from Envoy's descriptor at
 * run time, so compiling needs no protobuf root (loading it is about 0.1 s, most of what
 * `validate` spends on a config with outlier detection beyond its routes); the unit test
 * test/unit/xds/outlier-detection.test.ts checks every key config accepts against the descriptor.
 */
const PLAIN_BOOL_FIELDS: ReadonlySet<string> = new Set(['split_external_local_origin_errors']);

/**
 * IR outlier detection -> Envoy `cluster.v3.OutlierDetection`: durations as Durations, the plain
 * bool fields as they are, every other value in its wrapper. `{}` stays `{}`: Envoy's defaults.
 */
export function compileOutlierDetection(
  settings: OutlierDetectionSettings,
): Message<'envoy.config.cluster.v3.OutlierDetection'> {
  // Keys are computed from the settings (their names are Envoy's, checked by config validation and
  // by the compile tests' `assertKnownFields`), so the object is built untyped and typed once.
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(settings)) {
    if (key.endsWith('_ms')) out[key.slice(0, -3)] = durationMs(value as number);
    else out[key] = PLAIN_BOOL_FIELDS.has(key) ? value : wrapped(value);
  }
  return out as Message<'envoy.config.cluster.v3.OutlierDetection'>;
}

import type { IRCluster } from '../../ir/types.js';
import { durationMs, wrapped, type ProtoObject } from '../../proto/codec.js';
import { messageType } from '../../proto/proto-root.js';

/** An IR cluster's outlier detection settings (Envoy field names, `_ms` for durations). */
type OutlierDetectionSettings = NonNullable<IRCluster['outlierDetection']>;

/**
 * IR outlier detection -> Envoy `cluster.v3.OutlierDetection`. Field shapes (wrapper, Duration or
 * plain bool) are read from Envoy's own descriptor, so the table of accepted keys in config and
 * the wire shape cannot disagree. `{}` stays `{}`: Envoy's defaults.
 */
export function compileOutlierDetection(settings: OutlierDetectionSettings): ProtoObject {
  const fields = messageType('envoy.config.cluster.v3.OutlierDetection').fields;
  const out: ProtoObject = {};
  for (const [key, value] of Object.entries(settings)) {
    if (key.endsWith('_ms')) out[key.slice(0, -3)] = durationMs(value as number);
    else out[key] = fields[key]?.type === 'bool' ? value : wrapped(value);
  }
  return out;
}

import type { IRCluster } from '../../ir/types.js';
import { durationMs, wrapped } from '../../proto/codec.js';
import type { Message } from '../../proto/messages.js';
import { messageType } from '../../proto/proto-root.js';

/** An IR cluster's outlier detection settings (Envoy field names, `_ms` for durations). */
type OutlierDetectionSettings = NonNullable<IRCluster['outlierDetection']>;

/**
 * IR outlier detection -> Envoy `cluster.v3.OutlierDetection`. Field shapes (wrapper, Duration or
 * plain bool) are read from Envoy's own descriptor, so the table of accepted keys in config and
 * the wire shape cannot disagree. `{}` stays `{}`: Envoy's defaults.
 */
export function compileOutlierDetection(
  settings: OutlierDetectionSettings,
): Message<'envoy.config.cluster.v3.OutlierDetection'> {
  const fields = messageType('envoy.config.cluster.v3.OutlierDetection').fields;
  // Keys are computed from the settings (their names are Envoy's, checked by config validation and
  // by the compile tests' `assertKnownFields`), so the object is built untyped and typed once.
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(settings)) {
    if (key.endsWith('_ms')) out[key.slice(0, -3)] = durationMs(value as number);
    else out[key] = fields[key]?.type === 'bool' ? value : wrapped(value);
  }
  return out as Message<'envoy.config.cluster.v3.OutlierDetection'>;
}

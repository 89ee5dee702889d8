import type { OutlierDetectionSettings } from '../../config/types.js';
import type { ProtoObject } from '../codec/codec.js';
import { sharedDuration, sharedWrapped } from './shared-values.js';
import { messageType } from '../codec/proto-root.js';

/**
 * IR outlier detection -> Envoy `cluster.v3.OutlierDetection`. Field shapes (wrapper, Duration or
 * plain bool) are read from Envoy's own descriptor, so the table of accepted keys in config and
 * the wire shape cannot disagree. `{}` stays `{}`: Envoy's defaults.
 */
export function compileOutlierDetection(settings: OutlierDetectionSettings): ProtoObject {
  const out: ProtoObject = {};
  for (const key in settings) {
    const value = settings[key] as number | boolean;
    const field = outlierField(key);
    out[field.name] =
      field.kind === 'duration'
        ? sharedDuration(value as number)
        : field.kind === 'bool'
          ? value
          : sharedWrapped(value);
  }
  return out;
}

/** Envoy field name and shape for a settings key, looked up in the descriptor once per key. */
const outlierFields = new Map<
  string,
  { readonly name: string; readonly kind: 'duration' | 'bool' | 'wrapper' }
>();
function outlierField(key: string): {
  readonly name: string;
  readonly kind: 'duration' | 'bool' | 'wrapper';
} {
  let field = outlierFields.get(key);
  if (field === undefined) {
    const type = messageType('envoy.config.cluster.v3.OutlierDetection');
    field = key.endsWith('_ms')
      ? { name: key.slice(0, -3), kind: 'duration' }
      : { name: key, kind: type.fields[key]?.type === 'bool' ? 'bool' : 'wrapper' };
    outlierFields.set(key, field);
  }
  return field;
}

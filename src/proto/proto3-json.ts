import type protobuf from 'protobufjs';
import { messageType } from './proto-root.js';

const WRAPPERS = new Set(
  [
    'BoolValue',
    'UInt32Value',
    'Int32Value',
    'UInt64Value',
    'Int64Value',
    'DoubleValue',
    'FloatValue',
    'StringValue',
    'BytesValue',
  ].map((name) => `.google.protobuf.${name}`),
);

/**
 * Converts a decoded protobufjs object (as `decodeMessage` returns) into canonical proto3 JSON:
 * Durations as `"1.500s"`, wrapper types as bare values, Any as `@type` plus fields. That is the
 * form Envoy's docs, its config_dump and its JSON/YAML loader use, so golden files and dry-run
 * output read like Envoy and can be fed to `envoy --mode validate` unchanged.
 */
export function toProto3Json(messageName: string, value: unknown): unknown {
  return convertMessage(messageType(messageName), value);
}

function convertMessage(type: protobuf.Type, value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const object = value as Record<string, unknown>;
  const name = type.fullName;
  if (name === '.google.protobuf.Duration') return formatDuration(object);
  if (WRAPPERS.has(name)) return object.value ?? defaultWrapperValue(name);
  if (name === '.google.protobuf.Any') {
    const url = object['@type'];
    if (typeof url !== 'string') return object;
    const { '@type': _url, ...fields } = object;
    return {
      '@type': url,
      ...(convertMessage(messageType(url.slice(url.lastIndexOf('/') + 1)), fields) as object),
    };
  }
  if (name === '.google.protobuf.Struct') return structToJson(object);
  if (name === '.google.protobuf.Value') return valueToJson(object);
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(object)) {
    const field = type.fields[key];
    const resolved = field?.resolvedType;
    if (field === undefined || resolved === null || resolved === undefined || !('fields' in resolved)) {
      out[key] = member;
    } else if (field.map) {
      out[key] = Object.fromEntries(
        Object.entries(member as Record<string, unknown>).map(([k, v]) => [
          k,
          convertMessage(resolved as protobuf.Type, v),
        ]),
      );
    } else if (field.repeated) {
      out[key] = (member as unknown[]).map((item) => convertMessage(resolved as protobuf.Type, item));
    } else {
      out[key] = convertMessage(resolved as protobuf.Type, member);
    }
  }
  return out;
}

function formatDuration(duration: Record<string, unknown>): string {
  const seconds = Number(duration.seconds ?? 0);
  const nanos = Number(duration.nanos ?? 0);
  if (nanos === 0) return `${seconds}s`;
  const fraction = String(Math.abs(nanos))
    .padStart(9, '0')
    .replace(/(?:000)+$/, '');
  return `${seconds}.${fraction}s`;
}

function defaultWrapperValue(name: string): unknown {
  if (name.endsWith('BoolValue')) return false;
  if (name.endsWith('StringValue') || name.endsWith('BytesValue')) return '';
  return 0;
}

/** A decoded `google.protobuf.Struct` (`{fields: {k: Value}}`) as the plain JSON object it stands for. */
function structToJson(struct: Record<string, unknown>): Record<string, unknown> {
  const fields = (struct.fields ?? {}) as Record<string, Record<string, unknown>>;
  return Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, valueToJson(value)]));
}

/** A decoded `google.protobuf.Value` (protobufjs's camelCase members) as the plain JSON value it stands for. */
function valueToJson(value: Record<string, unknown>): unknown {
  if ('structValue' in value) return structToJson(value.structValue as Record<string, unknown>);
  if ('listValue' in value) {
    const values = ((value.listValue as { values?: unknown[] }).values ?? []) as Record<string, unknown>[];
    return values.map(valueToJson);
  }
  for (const key of ['stringValue', 'numberValue', 'boolValue']) if (key in value) return value[key];
  return null;
}

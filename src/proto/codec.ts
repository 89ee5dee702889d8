import type protobuf from 'protobufjs';
import { PortcullisError } from '../shared/errors.js';
import { messageType } from './proto-root.js';
import type { AnyOf, Message, MessageName } from './messages.js';
import { TYPE_PREFIX } from './type-urls.js';

/**
 * A decoded message, or any message walked without its type: a tree of proto3-JSON-shaped
 * objects. What the codec builds from is typed per message instead (`Message<N>`, messages.ts):
 * Envoy resources are built as objects in protobufjs's `fromObject` form (snake_case fields, enum
 * names as strings, Durations as `{seconds, nanos}`, typed configs through `typed(...)`) and turned
 * into wire bytes here. One encoder for everything means the golden files, the dry-run printer and
 * the ADS server see exactly the same bytes.
 */
export type ProtoObject = Record<string, unknown>;

/**
 * Wraps a message as a `google.protobuf.Any` in protobufjs's JSON form (`@type` plus fields). The
 * body is checked as the message `messageName` names, so a typed config cannot carry a field of
 * another message.
 */
export function typed<N extends MessageName>(messageName: N, value: Message<N>): AnyOf<N> {
  return { '@type': TYPE_PREFIX + messageName, ...value } as AnyOf<N>;
}

/**
 * Encodes `value` as the message `messageName` with protobufjs (`fromObject`, then `encode`).
 * protobufjs drops keys the message does not declare; the types stop that at compile time where
 * `value` is built as a `Message<N>`, and tests call `assertKnownFields` on everything the
 * compiler emits for what types cannot see (keys computed at run time).
 */
export function encodeMessage<N extends MessageName>(messageName: N, value: Message<N>): Uint8Array {
  const type = messageType(messageName);
  return type.encode(type.fromObject(value)).finish();
}

/** Decodes wire bytes back to a proto3-JSON-shaped object, expanding Any into `@type` form. */
export function decodeMessage(messageName: MessageName, bytes: Uint8Array): ProtoObject {
  const type = messageType(messageName);
  return type.toObject(type.decode(bytes), {
    enums: String,
    longs: String,
    bytes: String,
    json: true,
    defaults: false,
  }) as ProtoObject;
}

/** A duration in the `{seconds, nanos}` shape protobufjs expects, from milliseconds. */
export function durationMs(ms: number): { seconds: number; nanos: number } {
  const seconds = Math.floor(ms / 1000);
  return { seconds, nanos: Math.round((ms - seconds * 1000) * 1e6) };
}

/**
 * Throws when `value` holds a key that `messageName` does not declare, recursing into nested
 * messages and typed (`@type`) configs. protobufjs's `fromObject` silently ignores such keys; this
 * makes a typo in the compiler a test failure instead of a setting Envoy never sees.
 */
export function assertKnownFields(messageName: string, value: unknown, path = messageName): void {
  checkMessage(messageType(messageName), value, path);
}

function checkMessage(type: protobuf.Type, value: unknown, path: string): void {
  if (value === null || typeof value !== 'object') return;
  const object = value as ProtoObject;
  if (type.fullName === '.google.protobuf.Any') {
    const url = object['@type'];
    if (typeof url !== 'string') return;
    const { '@type': _ignored, ...fields } = object;
    checkMessage(messageType(url.slice(url.lastIndexOf('/') + 1)), fields, `${path}<${url}>`);
    return;
  }
  if (isWellKnownValue(type)) return;
  for (const [key, member] of Object.entries(object)) {
    const field = type.fields[key];
    if (field === undefined) {
      throw new PortcullisError('XDS_UNKNOWN_FIELD', `${path}.${key}: no such field in ${type.fullName}`);
    }
    const resolved = field.resolvedType;
    if (resolved === null || !('fields' in resolved)) continue;
    const items = field.map
      ? Object.values(member as ProtoObject)
      : field.repeated
        ? (member as unknown[])
        : [member];
    items.forEach((item, index) =>
      checkMessage(
        resolved as protobuf.Type,
        item,
        field.repeated ? `${path}.${key}[${index}]` : `${path}.${key}`,
      ),
    );
  }
}

function isWellKnownValue(type: protobuf.Type): boolean {
  return type.fullName === '.google.protobuf.Struct' || type.fullName === '.google.protobuf.Value';
}

/** `google.protobuf.BoolValue` / `UInt32Value` / ... in the shape protobufjs expects. */
export function wrapped<T extends boolean | number | string>(value: T): { value: T } {
  return { value };
}

import { stringify } from 'yaml';
import { sortKeys } from '../shared/canonical-json.js';
import { decodeMessage, encodeMessage } from './codec.js';
import type { Message } from './messages.js';
import { toProto3Json } from './proto3-json.js';
import { RESOURCE_TYPES, SHORT_NAMES, type ResourceType } from './type-urls.js';

/** Resources of each type, keyed by their short names (`clusters`, `endpoints`, ...). */
export type RenderedResources = Record<(typeof SHORT_NAMES)[ResourceType], unknown[]>;

/**
 * Renders resources the way Envoy will see them: encode to wire bytes, decode, proto3 JSON,
 * canonical key order. A field the encoder dropped (a typo, a wrong shape) is therefore absent here too, which
 * is why golden files and `portcullis compile` both go through this.
 */
export function renderResources(
  resources: { readonly [T in ResourceType]: readonly { readonly message: Message<T> }[] },
  options: { redactSecrets?: boolean } = {},
): RenderedResources {
  const encoded = {} as Record<ResourceType, Uint8Array[]>;
  for (const type of RESOURCE_TYPES) {
    const messages: readonly { readonly message: Message<ResourceType> }[] = resources[type];
    encoded[type] = messages.map(({ message }) => encodeMessage(type, message));
  }
  return renderEncoded(encoded, options);
}

/**
 * `renderResources` from wire bytes already encoded (a snapshot's, so `portcullis compile` prints
 * the very bytes it would serve without encoding them again): decode, proto3 JSON, canonical keys.
 */
export function renderEncoded(
  resources: { readonly [T in ResourceType]: readonly Uint8Array[] },
  options: { redactSecrets?: boolean } = {},
): RenderedResources {
  const out = { clusters: [], endpoints: [], filters: [], listeners: [], scopes: [], routes: [] } as RenderedResources;
  for (const type of RESOURCE_TYPES) {
    out[SHORT_NAMES[type]] = resources[type].map((bytes) => {
      const decoded = sortKeys(toProto3Json(type, decodeMessage(type, bytes)));
      return options.redactSecrets === true ? redactPrivateKeys(decoded) : decoded;
    });
  }
  return out;
}

/** YAML text for rendered resources: stable formatting for diffs. */
export function toYaml(value: unknown): string {
  return stringify(value, { lineWidth: 0, sortMapEntries: false });
}

/**
 * Replaces inline private keys and gRPC `initial_metadata` values (the credential ext_authz
 * presents) with a marker so dry-run output never prints a secret.
 */
export function redactPrivateKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactPrivateKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) {
      if (key === 'private_key') out[key] = { inline_string: '[redacted]' };
      else if (key === 'initial_metadata' && Array.isArray(member)) {
        out[key] = member.map((header: unknown) => ({ ...(header as object), value: '[redacted]' }));
      } else out[key] = redactPrivateKeys(member);
    }
    return out;
  }
  return value;
}

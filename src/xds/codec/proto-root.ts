import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';

/**
 * The protobufjs reflection root for every Envoy message Portcullis speaks, loaded once from the
 * descriptor that `npm run proto` generates (proto/envoy.json). Field names keep Envoy's
 * snake_case, so code and golden files read like Envoy's API reference.
 */
let cached: protobuf.Root | undefined;

/** Returns the shared reflection root, loading it on first use. */
export function protoRoot(): protobuf.Root {
  if (cached === undefined) {
    const url = new URL('../../../proto/envoy.json', import.meta.url);
    const descriptor = JSON.parse(readFileSync(url, 'utf8')) as {
      nested: NonNullable<protobuf.INamespace['nested']>;
    };
    cached = protobuf.Root.fromJSON({ nested: descriptor.nested });
    cached.resolveAll();
  }
  return cached;
}

const typeCache = new Map<string, protobuf.Type>();

/** Looks up a message type by its full name (`envoy.config.cluster.v3.Cluster`); throws if unknown. */
export function messageType(fullName: string): protobuf.Type {
  let type = typeCache.get(fullName);
  if (type === undefined) {
    type = protoRoot().lookupType(fullName);
    typeCache.set(fullName, type);
  }
  return type;
}

import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';

/**
 * The protobufjs reflection root for every Envoy message Portcullis speaks, built from the
 * descriptor that `npm run proto` generates (proto/envoy.json). Field names keep Envoy's
 * snake_case, so code and golden files read like Envoy's API reference.
 */
function loadRoot(): protobuf.Root {
  const url = new URL('../../proto/envoy.json', import.meta.url);
  const descriptor = JSON.parse(readFileSync(url, 'utf8')) as {
    nested: NonNullable<protobuf.INamespace['nested']>;
  };
  const root = protobuf.Root.fromJSON({ nested: descriptor.nested });
  root.resolveAll();
  return root;
}

/**
 * The root, read on first use rather than at import, so commands that never touch a protobuf
 * (`--version`, `validate` errors) do not pay for it. It is a constant once loaded: nothing in it
 * depends on configuration or changes afterwards.
 */
let root: protobuf.Root | undefined;

/** Returns the reflection root, loading it on first use. */
export function protoRoot(): protobuf.Root {
  root ??= loadRoot();
  return root;
}

/** Looks up a message type by its full name (`envoy.config.cluster.v3.Cluster`); throws if unknown. */
export function messageType(fullName: string): protobuf.Type {
  return protoRoot().lookupType(fullName);
}

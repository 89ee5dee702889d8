import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type protobuf from 'protobufjs';

const requireModule = createRequire(import.meta.url);

/**
 * The protobufjs reflection root for every Envoy message Portcullis speaks, built from the
 * descriptor that `npm run proto` generates (proto/envoy.json), with a table of its message types
 * by full name (`envoy.config.cluster.v3.Cluster`), made once with the root and constant like it.
 * Field names keep Envoy's snake_case, so code and golden files read like Envoy's API reference.
 */
interface LoadedRoot {
  readonly root: protobuf.Root;
  readonly types: ReadonlyMap<string, protobuf.Type>;
}

function loadRoot(): LoadedRoot {
  // protobufjs (a CommonJS package) is required here, with the root, so a command that never
  // encodes (`validate`, whose compile imports this module for its value helpers) does not load it.
  const protobufjs = requireModule('protobufjs') as typeof protobuf;
  const url = new URL('../../proto/envoy.json', import.meta.url);
  const descriptor = JSON.parse(readFileSync(url, 'utf8')) as {
    nested: NonNullable<protobuf.INamespace['nested']>;
  };
  const root = protobufjs.Root.fromJSON({ nested: descriptor.nested });
  root.resolveAll();
  return { root, types: typesByName(protobufjs, root) };
}

/**
 * Every message type under `root` by its full name without the leading dot. protobufjs's own
 * `lookupType` splits and joins the name on each call (it resolves relative names too), which the
 * encoder would otherwise pay once per resource; the codec only ever names types in full.
 */
function typesByName(protobufjs: typeof protobuf, root: protobuf.Root): Map<string, protobuf.Type> {
  const types = new Map<string, protobuf.Type>();
  const pending: protobuf.Namespace[] = [root];
  for (let at = pending.pop(); at !== undefined; at = pending.pop()) {
    for (const nested of at.nestedArray) {
      if (nested instanceof protobufjs.Type) types.set(nested.fullName.slice(1), nested);
      if (nested instanceof protobufjs.Namespace) pending.push(nested); // a Type is one too
    }
  }
  return types;
}

/**
 * The root, read on first use rather than at import, so commands that never touch a protobuf
 * (`--version`, `validate` errors) do not pay for it. It is a constant once loaded: nothing in it
 * depends on configuration or changes afterwards.
 */
let loaded: LoadedRoot | undefined;

function loadedRoot(): LoadedRoot {
  loaded ??= loadRoot();
  return loaded;
}

/** Returns the reflection root, loading it on first use. */
export function protoRoot(): protobuf.Root {
  return loadedRoot().root;
}

/** Looks up a message type by its full name (`envoy.config.cluster.v3.Cluster`); throws if unknown. */
export function messageType(fullName: string): protobuf.Type {
  const type = loadedRoot().types.get(fullName);
  if (type === undefined) throw new Error(`no such type: ${fullName}`);
  return type;
}

import type { CompiledResource, CompiledResources } from '../../src/proto/compiled.js';
import { RESOURCE_TYPES, type ResourceType } from '../../src/proto/type-urls.js';

/** Compiled resources whose lists and messages a test may edit. */
export type EditableCompiled = Record<ResourceType, { name: string; message: Record<string, unknown> }[]>;

/**
 * A deep, editable copy of compiled resources, for a test that breaks a resource on purpose. The
 * copies carry no content key (see `CompiledResource.contentKey`): an edited message is no longer
 * what the key says it was made from.
 */
export function editableCompiled(compiled: CompiledResources): EditableCompiled {
  const copy = (resource: CompiledResource): { name: string; message: Record<string, unknown> } => ({
    name: resource.name,
    message: structuredClone(resource.message) as Record<string, unknown>,
  });
  return Object.fromEntries(
    RESOURCE_TYPES.map((type) => [type, compiled[type].map(copy)]),
  ) as EditableCompiled;
}

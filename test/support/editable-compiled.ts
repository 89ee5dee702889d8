import { RESOURCE_TYPES } from '../../src/xds/codec/type-urls.js';
import type { CompiledResource, CompiledResources } from '../../src/xds/compile/compile.js';

/**
 * A deep, editable copy of compiled resources, every message built and held: compile's per-route
 * resources build theirs when read (LazyResource), and built messages share frozen constants, so
 * a test that breaks a resource on purpose edits this copy instead.
 */
export function editableCompiled(compiled: CompiledResources): CompiledResources {
  const out: Partial<Record<keyof CompiledResources, readonly CompiledResource[]>> = {};
  for (const type of RESOURCE_TYPES) {
    out[type] = compiled[type].map(({ name, message }) => ({ name, message: structuredClone(message) }));
  }
  return out as CompiledResources;
}

import type { CompiledResources } from '../../src/xds/compile/compile.js';
import { withBuiltMessages, type BuiltResources } from '../../src/xds/compile/lazy-resource.js';

/**
 * A deep, editable copy of compiled resources, every message built and held: compile's per-route
 * resources build theirs when read (LazyResource), and built messages share frozen constants, so
 * a test that breaks a resource on purpose edits this copy instead.
 */
export function editableCompiled(compiled: CompiledResources): BuiltResources {
  return structuredClone(withBuiltMessages(compiled));
}

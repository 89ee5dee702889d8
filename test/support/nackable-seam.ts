// A compile-stage test seam for the build worker (StartOptions.afterCompileModule): when a route
// configuration mentions `nack-` (a test writes it into a response header value), every route
// configuration's first route matches `a{1001}`, a regex RE2 refuses (repetition is capped at
// 1000), so Envoy NACKs the build. A pure function of the compiled resources, so it runs in the
// worker as it would in the test's own thread.
import type { CompiledResources } from '../../src/proto/compiled.js';
import { ROUTE_CONFIGURATION_TYPE } from '../../src/proto/type-urls.js';
import { editableCompiled } from './editable-compiled.js';

/** The marker a config carries to have its build NACKed. */
export const NACK_MARKER = 'nack-';

/** `compiled` with every route configuration broken when one of them carries NACK_MARKER. */
export default function nackable(compiled: CompiledResources): CompiledResources {
  const marked = compiled[ROUTE_CONFIGURATION_TYPE].some((config) =>
    JSON.stringify(config.message).includes(NACK_MARKER),
  );
  if (!marked) return compiled;
  const broken = editableCompiled(compiled);
  for (const config of broken[ROUTE_CONFIGURATION_TYPE]) {
    const hosts = (config.message as { virtual_hosts?: { routes?: { match: unknown }[] }[] }).virtual_hosts;
    for (const host of hosts ?? []) {
      const first = host.routes?.[0];
      if (first !== undefined) first.match = { safe_regex: { regex: 'a{1001}' } };
    }
  }
  return broken as unknown as CompiledResources;
}

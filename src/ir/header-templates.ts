import type { IR } from './types.js';

/**
 * The lower-case names of every request header some route fills from the session
 * (`IRRoute.requestHeaderTemplates`), sorted: what Envoy's forwarded debug lines must mask, since
 * they carry the identity provider's tokens.
 */
export function templatedHeaderNames(ir: Pick<IR, 'virtualHosts'>): string[] {
  const names = new Set<string>();
  for (const vhost of ir.virtualHosts)
    for (const route of vhost.routes)
      for (const name of Object.keys(route.requestHeaderTemplates ?? {})) names.add(name);
  return [...names].sort();
}

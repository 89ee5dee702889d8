import type { IR, IRPathMatch, IRRoute, IRVirtualHost } from '../ir/types.js';

/** A path a config protected that the next config serves to anyone. */
export interface NewlyPublic {
  /** The virtual host's domains, as Envoy matches them. */
  readonly hosts: readonly string[];
  /** The protected route's matcher, e.g. `prefix /admin`. */
  readonly path: string;
  /** The protected route's name in the config before. */
  readonly was: string;
  /** The name of the public route that now answers that path first. */
  readonly now: string;
}

/**
 * The protected routes of `before` whose paths `after` answers publicly: for
 * each route of `before` that is not public, the first route of the same virtual host in `after`
 * (Envoy takes the first match) whose matcher covers every path of it; when that route is
 * public, the path went public. The reload loop logs each at warn, so a reload that opens
 * `/admin` (a half-written file, a shadowing route, an edited policy) is never silent. A regex
 * route is covered only by the same regex or a prefix of nothing (`/`): anything else is not
 * decidable cheaply, and this is a warning, not a gate. Pure.
 */
export function newlyPublic(before: IR, after: IR): NewlyPublic[] {
  const found: NewlyPublic[] = [];
  const byName = new Map(after.virtualHosts.map((host) => [host.name, host]));
  const fallback = catchAll(after);
  for (const host of before.virtualHosts) {
    const next = byName.get(host.name) ?? fallback;
    // The very same host (a reload that left it alone) opens nothing.
    if (next === undefined || next === host) continue;
    for (const route of host.routes) {
      if (route.public || route.answer !== undefined) continue;
      const first = next.routes.find((candidate) => covers(candidate.match, route.match));
      if (first === undefined || !first.public) continue;
      found.push({ hosts: host.domains, path: describe(route.match), was: route.name, now: first.name });
    }
  }
  return found;
}

/** The virtual host every other host falls back to (domains `*`), if any. */
function catchAll(ir: IR): IRVirtualHost | undefined {
  return ir.virtualHosts.find((host) => host.domains.includes('*'));
}

/** True when every path `inner` matches, `outer` matches too (case-sensitive, as Envoy's default). */
function covers(outer: IRPathMatch, inner: IRPathMatch): boolean {
  switch (outer.kind) {
    case 'prefix':
      return outer.value === '/' || (inner.kind !== 'regex' && inner.value.startsWith(outer.value));
    case 'path':
      return inner.kind === 'path' && inner.value === outer.value;
    case 'regex':
      return inner.kind === 'regex' && inner.value === outer.value;
  }
}

/** `prefix /admin`, `path /login`, `regex /a.*`. */
export function describe(match: IRRoute['match']): string {
  return `${match.kind} ${match.value}`;
}

import type { RouteSettings } from '../config/types.js';
import { canonicalJson } from '../shared/canonical-json.js';
import { shortHash } from '../shared/hash.js';

/**
 * A route's id: 16 hex characters over what identifies it (from, matcher, destinations with
 * weights), so reordering routes or editing their headers keeps names and Envoy stats stable.
 * Ids must never change for the same route: they name clusters and Envoy stats.
 */
export function routeId(route: RouteSettings): string {
  return shortHash(routeIdentityText(route));
}

/**
 * What `routeId` hashes: the canonical JSON of `{from, prefix, path, regex, to}` (unset matchers
 * left out), each destination written as the config does (`href` or `href,weight`).
 */
export function routeIdentityText(route: RouteSettings): string {
  return canonicalJson({
    from: route.from_href,
    prefix: route.prefix,
    path: route.path,
    regex: route.regex,
    to: route.to.map(({ href, weight }) => (weight === undefined ? href : `${href},${weight}`)),
  });
}

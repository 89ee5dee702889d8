/**
 * A route's identity: what Envoy matches it on, and nothing it does once matched. The id it gives
 * is the ext_authz route context and names the route's cluster and Envoy route, so everything a
 * live change can alter without moving the route (its upstreams and their weights, health checks,
 * outlier detection, TLS, timeouts, headers, policy) keeps the name: endpoints change through EDS
 * and cluster fields through an in-place cluster update, never through a new cluster that Envoy
 * would have to swap in while requests are in flight.
 */
import type { RouteSettings } from '../config/types.js';
import type { IRPathMatch } from '../ir/types.js';
import { canonicalJson } from '../shared/canonical-json.js';
import { shortHash } from '../shared/hash.js';
import { connectAuthority } from '../config/parse-url.js';

/** A route's identity: its id, the text the id hashes, and what Envoy matches it on. */
export interface RouteIdentity {
  /** 16 hex characters: the first 64 bits of SHA-256 over `text`. */
  readonly id: string;
  /** What the id hashes: the match key, and what kind of answer the route gives if Envoy gives it. */
  readonly text: string;
  /**
   * What Envoy matches the route on, as canonical JSON: two routes with the same key in one
   * config are one too many, since Envoy takes the first route that matches.
   */
  readonly matchKey: string;
}

/**
 * The route's path matcher as Envoy applies it: `path` (exact), `regex` (full match), else
 * `prefix`, which is `/` when none of the three is set (so an unset prefix and `prefix: /` are
 * the same route).
 */
export function routeMatch(route: RouteSettings): IRPathMatch {
  if (route.path !== undefined) return { kind: 'path', value: route.path };
  if (route.regex !== undefined) return { kind: 'regex', value: route.regex };
  return { kind: 'prefix', value: route.prefix ?? '/' };
}

/**
 * A route's identity (see the module comment). `matchKey` is what Envoy matches the route on, as
 * canonical JSON: for an HTTP route its `from` host name, lower-cased (`"host"`; virtual hosts
 * ignore the scheme and port of `from`, so they are not part of it) and its path matcher
 * (`"prefix"`, `"path"` or `"regex"`, from `routeMatch`); for a TCP route the host and port
 * clients CONNECT to (`"tcp":"host:port"`, the bastion form's target). `text`, which the id
 * hashes, is the match key, plus `"answer":"redirect"` or `"answer":"response"` for a route Envoy
 * answers itself. Never the route's destinations or anything else it does once matched. Pure and
 * deterministic: the same route gives the same id in every process.
 */
export function routeIdentity(route: RouteSettings): RouteIdentity {
  const fields = matchFields(route);
  const matchKey = canonicalJson(fields);
  const answer =
    route.redirect !== undefined ? 'redirect' : route.response !== undefined ? 'response' : undefined;
  const text = answer === undefined ? matchKey : canonicalJson({ ...fields, answer });
  return { id: shortHash(text), text, matchKey };
}

function matchFields(route: RouteSettings): Record<string, string> {
  if (route.kind === 'tcp') {
    const target = connectAuthority(route.from);
    return { tcp: `${target.host}:${target.port}` };
  }
  const match = routeMatch(route);
  return { host: route.from_host, [match.kind]: match.value };
}

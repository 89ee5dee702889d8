/**
 * Route candidates from Ingresses and HTTPRoutes -> the ordered route entries of a config
 * document. Envoy takes the first route that matches and Portcullis refuses a route an earlier one
 * shadows, so the order must give Kubernetes's precedence: every exact path first, then regular
 * expressions, then prefixes longest first (with element-wise prefixes, a request matching an
 * exact path and a prefix is the exact path or longer, so "exact first" is the Ingress rule
 * "longest match, then Exact over Prefix"). Regular expressions (HTTPRoute only; their precedence
 * is left to implementations) come before every prefix, which could otherwise cover them. Routes
 * for every host (`*`) come last.
 *
 * Kubernetes `Prefix` matching is element-wise: `/foo` matches `/foo` and `/foo/bar`, never
 * `/foobar`, and a trailing slash is ignored. Envoy's `prefix` is a string prefix, so each
 * Prefix path becomes two routes: `path: /foo` and `prefix: /foo/` (and `/` stays `prefix: /`).
 *
 * Two objects claiming the same host and path: the older object keeps it (then namespace/name,
 * then place in the object), as Kubernetes controllers agree, and the newer one is reported and
 * left out, so one namespace can neither take over another's path nor block every other change.
 *
 * Before this, host-ownership.ts leaves out every claim of a namespace on a host that another
 * namespace owns (the namespace of the oldest Ingress or HTTPRoute claiming it) and has not shared
 * with `portcullis.dev/allowed_namespaces`: so a newer namespace cannot add a new path (`/login`)
 * on another's host either, which the path conflict rule alone would let through.
 */
import { describeObject, type ObjectProblem, type ObjectRef } from './object-problems.js';
import type { ObjectMeta } from './objects.js';

/** A path match as Kubernetes states it. */
export interface PathMatch {
  readonly kind: 'Exact' | 'Prefix' | 'RegularExpression';
  readonly value: string;
}

/** Where one route entry comes from, for mapping parseConfig's key paths back to the object. */
export interface RouteOrigin {
  readonly object: ObjectRef;
  /** The field the route comes from (`spec.rules[0].http.paths[1]`). */
  readonly where: string;
  /** Route key -> where that key's value comes from (`annotation portcullis.dev/policy`, a backend). */
  readonly keys: Readonly<Record<string, string>>;
}

/** One host and path of an object, before ordering and conflict checks. */
export interface RouteCandidate {
  /** Lower-case host, `*.example.com`, or `*` for every host. */
  readonly host: string;
  readonly match: PathMatch;
  /** The route's other keys: `to` (or an HTTPRoute's `redirect`), options from annotations and filters. */
  readonly options: Readonly<Record<string, unknown>>;
  readonly origin: RouteOrigin;
  /** Conflict order: creation time, `namespace/name`, place in the object. */
  readonly rank: readonly [string, string, number];
  /** Only implied (an Ingress default backend under a host with rules): any real path wins over it. */
  readonly fallback?: boolean;
  /**
   * What replaces the matched prefix (an HTTPRoute ReplacePrefixMatch): the `prefix_rewrite` of each
   * half, so `/foo/x` becomes `/bar/x` under `prefix: /foo/` and `/foo` becomes `/bar`.
   */
  readonly prefixReplacement?: string;
  /** The namespaces (or `*`) the object's `portcullis.dev/allowed_namespaces` shares its hosts with. */
  readonly sharesHostWith?: readonly string[];
}

/** The ordered route entries, their origins (same index), and what was left out and why. */
export interface AssembledRoutes {
  readonly routes: readonly Record<string, unknown>[];
  readonly origins: readonly RouteOrigin[];
  readonly skipped: readonly ObjectProblem[];
}

/**
 * One Envoy matcher of a candidate. `standing` decides between equal matchers: 0 what the object
 * states, 1 the `path` half of a Prefix (an Exact path of the same value wins over it, as
 * Kubernetes says), 2 an implied default-backend route; only two stated ones conflict.
 */
interface Entry {
  readonly candidate: RouteCandidate;
  readonly matcher: 'path' | 'regex' | 'prefix';
  readonly value: string;
  readonly standing: 0 | 1 | 2;
}

/**
 * The conflict rank of an object: older first; objects without a timestamp after those with one.
 * The time is compared as epoch milliseconds: the watcher's objects carry `creationTimestamp` as
 * the API's RFC 3339 text when a watch event delivered them, but as a Date when client-node's
 * typed list deserialized them, and the two must order alike.
 */
export function rankOf(
  object: ObjectRef,
  creationTimestamp: string | Date | undefined,
  place: number,
): readonly [string, string, number] {
  return [timestampKey(creationTimestamp), `${object.namespace ?? ''}/${object.name}`, place];
}

/** A creation time as fixed-width epoch milliseconds (text order is time order); none or unreadable: last. */
function timestampKey(value: string | Date | undefined): string {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : NaN;
  return Number.isFinite(ms) && ms >= 0 ? String(ms).padStart(16, '0') : '\uffff';
}

/**
 * `objects` oldest first (then by `namespace/name`): the order objects are read in, so the output
 * never depends on the order the API listed them, and an older object's certificate comes before
 * a newer one's (Envoy takes the first certificate that fits a name equally well).
 */
export function oldestFirst<T extends { readonly metadata: ObjectMeta }>(objects: readonly T[]): T[] {
  const key = ({ metadata }: T): readonly [string, string, number] =>
    rankOf(
      { kind: '', name: metadata.name, namespace: metadata.namespace ?? '' },
      metadata.creationTimestamp,
      0,
    );
  return [...objects].sort((a, b) => compareRank(key(a), key(b)));
}

/** Orders `candidates` as Kubernetes precedence says and resolves conflicts (see the module comment). */
export function assembleRoutes(candidates: readonly RouteCandidate[]): AssembledRoutes {
  const entries = candidates.flatMap(expand).sort(compareEntries);
  const routes: Record<string, unknown>[] = [];
  const origins: RouteOrigin[] = [];
  const skipped: ObjectProblem[] = [];
  const taken = new Map<string, Entry>();
  for (const entry of entries) {
    const key = `${entry.candidate.host}\u0000${entry.matcher}\u0000${entry.value}`;
    const earlier = taken.get(key);
    if (earlier !== undefined) {
      if (entry.standing === 0 && earlier.standing === 0) skipped.push(conflict(entry, earlier));
      continue;
    }
    taken.set(key, entry);
    routes.push({
      from: `https://${entry.candidate.host}`,
      [entry.matcher]: entry.value,
      ...entry.candidate.options,
      ...prefixRewrite(entry),
    });
    origins.push(entry.candidate.origin);
  }
  return { routes, origins, skipped };
}

/** A candidate's Envoy matchers: standing 0 for what it states, 1 for a Prefix's implied exact path, 2 for a fallback. */
function expand(candidate: RouteCandidate): Entry[] {
  const own = candidate.fallback === true ? 2 : 0;
  const { kind, value } = candidate.match;
  if (kind === 'Exact') return [{ candidate, matcher: 'path', value, standing: own }];
  if (kind === 'RegularExpression') return [{ candidate, matcher: 'regex', value, standing: own }];
  const trimmed = value.replace(/\/+$/, '');
  if (trimmed === '') return [{ candidate, matcher: 'prefix', value: '/', standing: own }];
  return [
    { candidate, matcher: 'path', value: trimmed, standing: own === 2 ? 2 : 1 },
    { candidate, matcher: 'prefix', value: `${trimmed}/`, standing: own },
  ];
}

/**
 * The `prefix_rewrite` of an entry whose candidate replaces its matched prefix (a ReplacePrefixMatch
 * filter, or the `portcullis.dev/prefix_rewrite` annotation): Envoy replaces what the entry's own
 * matcher matched, so under `prefix: /foo/` the replacement needs its trailing slash, or `/foo/x`
 * would go upstream as `/barx` instead of `/bar/x`.
 */
function prefixRewrite(entry: Entry): Record<string, string> {
  const { prefixReplacement, options } = entry.candidate;
  const replacement =
    prefixReplacement ?? (typeof options.prefix_rewrite === 'string' ? options.prefix_rewrite : undefined);
  if (replacement === undefined) return {};
  if (entry.matcher !== 'prefix') return { prefix_rewrite: replacement === '' ? '/' : replacement };
  return { prefix_rewrite: replacement.endsWith('/') ? replacement : `${replacement}/` };
}

const GROUP = { path: 0, regex: 1, prefix: 2 } as const;

function compareEntries(a: Entry, b: Entry): number {
  return (
    compareHosts(a.candidate.host, b.candidate.host) ||
    GROUP[a.matcher] - GROUP[b.matcher] ||
    (a.matcher === 'prefix' ? b.value.length - a.value.length : 0) ||
    compareText(a.value, b.value) ||
    a.standing - b.standing ||
    compareRank(a.candidate.rank, b.candidate.rank)
  );
}

function compareRank(a: RouteCandidate['rank'], b: RouteCandidate['rank']): number {
  return compareText(a[0], b[0]) || compareText(a[1], b[1]) || a[2] - b[2];
}

/**
 * Hosts in code-unit order, with `*` (every host) last: where Envoy puts it beside other wildcard
 * shapes in one virtual host, the routes of the hosts it would cover must come first.
 */
function compareHosts(a: string, b: string): number {
  return Number(a === '*') - Number(b === '*') || compareText(a, b);
}

/** Code-unit order, the same in every locale, so the output never depends on the machine. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function conflict(entry: Entry, earlier: Entry): ObjectProblem {
  const winner = earlier.candidate.origin;
  return {
    object: entry.candidate.origin.object,
    where: entry.candidate.origin.where,
    message: `host ${entry.candidate.host} ${entry.matcher} ${entry.value} is already served by ${describeObject(winner.object)} (${winner.where}), which is older or comes first; this path is left out`,
  };
}

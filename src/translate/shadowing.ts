/**
 * Shadowed routes: Envoy takes the first route of a virtual host that matches, so a route that an
 * earlier one on the same `from` host already covers never sees a request, and its policy never
 * applies. `prefix: /` public, then `prefix: /admin` with `allowed_users`, would leave `/admin`
 * public; translate refuses it, naming both routes.
 *
 * Only coverage that is certain is reported (never a guess that blocks a good config):
 * - an earlier prefix covers a later prefix, path or regex that starts with it (for a regex: the
 *   literal every full match starts with, from RE2's program, as far as it is ASCII);
 * - an earlier path covers the same path (the exact-duplicate check in translate.ts);
 * - an earlier regex covers a later path it full-matches (RE2 semantics, linear time; ASCII paths
 *   only, since Envoy's RE2 matches bytes).
 * Hosts count only when the `from` host strings are equal (a wildcard covering a name is not
 * decided). Envoy's prefix and path matching is case-sensitive, as compiled.
 *
 * Cost per route is in the length of its matcher (a lookup per prefix of the string), plus one
 * full match per earlier regex whose literal prefix starts the path, so 10,000 routes on one host
 * stay linear in practice.
 */
import type { IRPathMatch } from '../ir/types.js';
import { checkEnvoyRegex } from '../shared/re2-envoy.js';

/** The earlier route that covers a later one, with why, for the problem that names both. */
export interface Shadowing {
  readonly earlier: string;
  readonly because: string;
}

interface EarlierRegex {
  readonly at: string;
  readonly source: string;
}

/**
 * What a host's earlier routes cover. Made when a host's first prefix or regex route is recorded
 * (a host's first route needs none to be checked), the regex maps when first needed.
 */
interface HostRoutes {
  /** Each prefix with the key path of the first route that has it. */
  readonly prefixes: Map<string, string>;
  /** Earlier regexes by their ASCII literal prefix ('' when none), for paths to test. */
  regexesByPrefix: Map<string, EarlierRegex[]> | undefined;
  /** Full matchers compiled when a path first needs them (most regexes never meet a path). */
  matchers: Map<string, (input: string) => boolean> | undefined;
}

/** Finds, for each route in config order, an earlier route on the same host that covers it. */
export interface ShadowIndex {
  /**
   * The earlier route that covers `match` on `host`, if one certainly does; then records the
   * route (at key path `at`) as earlier for the routes after it.
   */
  visit(host: string, match: IRPathMatch, at: string): Shadowing | undefined;
}

/** A fresh index for one translate run (state lives in the returned object, none in the module). */
export function createShadowIndex(): ShadowIndex {
  const hosts = new Map<string, HostRoutes>();
  return {
    visit(host, match, at) {
      const routes = hosts.get(host);
      const regex = match.kind === 'regex' ? analyse(match.value, at) : undefined;
      const found = routes === undefined ? undefined : covering(routes, match, regex);
      if (match.kind === 'prefix' || regex !== undefined) {
        let recorded = routes;
        if (recorded === undefined) {
          recorded = { prefixes: new Map(), regexesByPrefix: undefined, matchers: undefined };
          hosts.set(host, recorded);
        }
        record(recorded, match, at, regex);
      }
      return found;
    },
  };
}

/** A regex route and the ASCII literal its full matches start with. */
interface AnalysedRegex extends EarlierRegex {
  readonly head: string;
}

/**
 * A leading `^` always holds at the start of a full match (Envoy's `safe_regex`), so the pattern
 * without it matches the same paths and shows its literal prefix (`^/admin/.*` is common).
 */
function analyse(source: string, at: string): AnalysedRegex | undefined {
  const checked = checkEnvoyRegex(source.startsWith('^') ? source.slice(1) : source);
  if (!checked.ok) return undefined;
  return { at, source, head: asciiHead(checked.literalPrefix) };
}

function covering(
  routes: HostRoutes,
  match: IRPathMatch,
  regex: AnalysedRegex | undefined,
): Shadowing | undefined {
  if (match.kind === 'regex') {
    return regex === undefined ? undefined : byPrefix(routes, regex.head, 'regex', match.value, true);
  }
  const prefixed = byPrefix(routes, match.value, match.kind, match.value, match.kind === 'path');
  if (prefixed !== undefined || match.kind !== 'path') return prefixed;
  return byRegex(routes, match.value);
}

/**
 * The earlier prefix that starts `text` (the later route's prefix or path, or the literal a
 * regex's matches start with): a lookup for each of its prefixes, shortest (most general) first.
 * `equalCovers` is false for a later prefix equal to an earlier one, which translate's
 * exact-duplicate check reports in its own words.
 */
function byPrefix(
  routes: HostRoutes,
  text: string,
  kind: IRPathMatch['kind'],
  value: string,
  equalCovers: boolean,
): Shadowing | undefined {
  const last = equalCovers ? text.length : text.length - 1;
  for (let end = 1; end <= last; end += 1) {
    const prefix = text.slice(0, end);
    const earlier = routes.prefixes.get(prefix);
    if (earlier !== undefined) {
      return {
        earlier,
        because: `its prefix ${JSON.stringify(prefix)} already matches every request this route's ${kind} ${JSON.stringify(value)} matches`,
      };
    }
  }
  return undefined;
}

/** The earlier regex that full-matches the path `path` (ASCII paths: Envoy's RE2 matches bytes). */
function byRegex(routes: HostRoutes, path: string): Shadowing | undefined {
  const regexes = routes.regexesByPrefix;
  if (regexes === undefined || asciiHead(path) !== path) return undefined;
  for (let end = 0; end <= path.length; end += 1) {
    for (const regex of regexes.get(path.slice(0, end)) ?? []) {
      if (matcher(routes, regex.source)(path)) {
        return {
          earlier: regex.at,
          because: `its regex ${JSON.stringify(regex.source)} already matches this route's path ${JSON.stringify(path)}`,
        };
      }
    }
  }
  return undefined;
}

function matcher(routes: HostRoutes, source: string): (input: string) => boolean {
  routes.matchers ??= new Map();
  let fullMatch = routes.matchers.get(source);
  if (fullMatch === undefined) {
    const checked = checkEnvoyRegex(source);
    fullMatch = checked.ok ? checked.fullMatch : () => false;
    routes.matchers.set(source, fullMatch);
  }
  return fullMatch;
}

function record(routes: HostRoutes, match: IRPathMatch, at: string, regex: AnalysedRegex | undefined): void {
  if (match.kind === 'prefix') {
    if (!routes.prefixes.has(match.value)) routes.prefixes.set(match.value, at);
    return;
  }
  if (regex === undefined) return;
  routes.regexesByPrefix ??= new Map();
  const list = routes.regexesByPrefix.get(regex.head);
  if (list === undefined) routes.regexesByPrefix.set(regex.head, [regex]);
  else list.push(regex);
}

/** The longest ASCII head of `text`: where re2js's runes and Envoy's bytes agree. */
function asciiHead(text: string): string {
  // eslint-disable-next-line no-control-regex
  const stop = text.search(/[^\x00-\x7f]/);
  return stop === -1 ? text : text.slice(0, stop);
}

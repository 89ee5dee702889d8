import { checkEnvoyRegex } from '../shared/re2-envoy.js';
import type { RouteFields } from './route-fields.js';
import type { Reader } from './value-readers.js';

/**
 * A route's path matcher (one of prefix, path, regex) and rewrites (prefix_rewrite, or a regex
 * pattern with its substitution). TCP routes match by host and port only.
 */
export function readMatching(
  reader: Reader,
  path: string,
  fields: RouteFields,
  kind: 'http' | 'tcp',
): Record<string, string | undefined> {
  const matchers = checkMatchers(reader, path, fields.str('prefix'), fields.str('path'), fields.str('regex'));
  if (kind === 'tcp' && Object.values(matchers).some((value) => value !== undefined)) {
    reader.problem(path, 'a TCP route matches by host and port only; remove prefix, path and regex');
  }
  const rewrites = checkRewrites(
    reader,
    path,
    fields.str('prefix_rewrite'),
    fields.str('regex_rewrite_pattern'),
    fields.str('regex_rewrite_substitution'),
  );
  return { ...matchers, ...rewrites };
}

function checkMatchers(
  reader: Reader,
  path: string,
  prefix?: string,
  exact?: string,
  regex?: string,
): Record<string, string | undefined> {
  const set = [prefix, exact, regex].filter((value) => value !== undefined).length;
  if (set > 1) reader.problem(path, 'set only one of prefix, path and regex');
  if (prefix !== undefined && !prefix.startsWith('/'))
    reader.problem(`${path}.prefix`, `must start with "/", got "${prefix}"`);
  if (exact !== undefined && !exact.startsWith('/'))
    reader.problem(`${path}.path`, `must start with "/", got "${exact}"`);
  if (regex !== undefined) checkRegex(reader, `${path}.regex`, regex);
  return { prefix, path: exact, regex };
}

function checkRewrites(
  reader: Reader,
  path: string,
  prefixRewrite?: string,
  pattern?: string,
  substitution?: string,
): Record<string, string | undefined> {
  if (prefixRewrite !== undefined && pattern !== undefined) {
    reader.problem(path, 'only prefix_rewrite or regex_rewrite_pattern can be specified, but not both');
  }
  if (pattern !== undefined) {
    checkRegex(reader, `${path}.regex_rewrite_pattern`, pattern);
    if (substitution === undefined)
      reader.problem(`${path}.regex_rewrite_substitution`, 'is required with regex_rewrite_pattern');
  } else if (substitution !== undefined) {
    reader.problem(`${path}.regex_rewrite_pattern`, 'is required with regex_rewrite_substitution');
  }
  return {
    prefix_rewrite: prefixRewrite,
    regex_rewrite_pattern: pattern,
    regex_rewrite_substitution: substitution,
  };
}

/**
 * Checks a regex the way Envoy's RE2 will compile it (shared/re2-envoy.ts): RE2's syntax (no
 * lookaround, no backreferences, repetitions up to 1000), Latin-1 escapes, and the program-size
 * limit, so that a pattern Envoy would refuse is an error here and never a NACK.
 */
export function checkRegex(reader: Reader, path: string, pattern: string): void {
  const checked = checkEnvoyRegex(pattern);
  if (!checked.ok)
    reader.problem(path, `"${pattern}" is not a regular expression Envoy's RE2 accepts: ${checked.reason}`);
}

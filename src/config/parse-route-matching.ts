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
 * Checks a regex compiles and stays within RE2, the engine Envoy uses: no lookaround and no
 * backreferences. JavaScript's engine is a close proxy for the rest of the syntax.
 */
export function checkRegex(reader: Reader, path: string, pattern: string): void {
  if (/\(\?<?[=!]/.test(pattern) || /\\[1-9]/.test(pattern)) {
    reader.problem(
      path,
      `"${pattern}" uses lookaround or a backreference, which Envoy's RE2 engine does not support`,
    );
    return;
  }
  try {
    new RegExp(pattern, 'u');
  } catch (err) {
    reader.problem(path, `"${pattern}" is not a valid regular expression: ${(err as Error).message}`);
  }
}

/**
 * `${VAR}` left literal in a config value. Portcullis does not expand environment variables inside
 * values (each option has its own variable instead, and secrets their `_file` form), so a value
 * written for a tool that does (`shared_secret: ${SHARED_SECRET}`) would be used as the literal
 * text: a guessable secret, a deny entry that never matches. Such a value is an error at its key.
 */
import type { Env } from './sources.js';
import { envName } from './option-table.js';
import { isPlainObject, type Reader } from './value-readers.js';

const PLACEHOLDER = /\$\{[A-Za-z_][A-Za-z0-9_]*(?::?[-=?+][^}]*)?\}/;

/**
 * A fixed response's body is content, not configuration: `${x}` may be meant there. Header maps
 * have templates of their own (header-templates.ts), which check every `${` with a better message.
 */
const CONTENT_KEYS = new Set(['body', 'set_request_headers', 'set_response_headers']);

/**
 * Reports each string in `document` (top-level values, routes included) and in the environment
 * variables of options that holds a `${NAME}` placeholder.
 */
export function checkPlaceholders(
  reader: Reader,
  document: Record<string, unknown>,
  env: Env,
  optionKeys: readonly string[],
): void {
  for (const [key, value] of Object.entries(document))
    if (!CONTENT_KEYS.has(key)) visit(reader, [key], value);
  for (const key of optionKeys) {
    if (CONTENT_KEYS.has(key)) continue;
    const name = envName(key);
    const value = env[name];
    if (value !== undefined && PLACEHOLDER.test(value)) report(reader, name, value);
  }
}

/**
 * Visits `value` at the key path `at` (keys and list indexes), which is made into text only for a
 * problem: nearly every string holds no placeholder, and 10,000 routes have ~50 values each.
 */
function visit(reader: Reader, at: (string | number)[], value: unknown): void {
  if (typeof value === 'string') {
    if (PLACEHOLDER.test(value)) report(reader, keyPath(at), value);
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => {
      at.push(index);
      visit(reader, at, item);
      at.pop();
    });
  } else if (isPlainObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      if (CONTENT_KEYS.has(key)) continue;
      at.push(key);
      visit(reader, at, item);
      at.pop();
    }
  }
}

/** `routes[3].to` from `['routes', 3, 'to']`. */
function keyPath(at: readonly (string | number)[]): string {
  return at
    .map((part, index) => (typeof part === 'number' ? `[${part}]` : index === 0 ? part : `.${part}`))
    .join('');
}

function report(reader: Reader, path: string, value: string): void {
  const placeholder = PLACEHOLDER.exec(value)?.[0] ?? '${...}';
  reader.problem(
    path,
    `holds ${placeholder}, which Portcullis does not expand: set the option through its environment variable (or its _file form for secrets) instead of a placeholder`,
  );
}

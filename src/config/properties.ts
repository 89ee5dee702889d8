/**
 * A reader for Java `.properties` files (the format the peer's viper reads): `key=value`,
 * `key: value` or `key value` lines, `#` and `!` comments, backslash line continuations and
 * escapes (`\t`, `\n`, `\uXXXX`). All values are strings; the option readers coerce them as they
 * do environment variables (lists comma-separated, maps and routes as JSON). A key with a dot,
 * `idp_request_params.prompt=login`, sets one entry of a map option (split at the first dot).
 */

/** The parsed document, a line number per key path, or the first syntax problem. */
export type PropertiesResult =
  | { readonly document: Record<string, unknown>; readonly lines: Map<string, number> }
  | { readonly error: string; readonly line: number };

interface LogicalLine {
  readonly text: string;
  readonly line: number;
}

function logicalLines(text: string): LogicalLine[] {
  const physical = text.split(/\r\n|\r|\n/);
  const out: LogicalLine[] = [];
  for (let index = 0; index < physical.length; index++) {
    const start = index;
    let current = (physical[index] ?? '').replace(/^[ \t\f]+/, '');
    if (current === '' || current.startsWith('#') || current.startsWith('!')) continue;
    while (/(^|[^\\])(\\\\)*\\$/.test(current) && index + 1 < physical.length) {
      index++;
      current = current.slice(0, -1) + (physical[index] ?? '').replace(/^[ \t\f]+/, '');
    }
    out.push({ text: current, line: start + 1 });
  }
  return out;
}

const ESCAPES: Record<string, string> = { t: '\t', n: '\n', r: '\r', f: '\f' };

function unescape(text: string, line: number): string {
  return text.replace(/\\(u[0-9a-fA-F]{4}|u.{0,4}|.)/g, (_match, escaped: string) => {
    if (escaped.startsWith('u') && escaped.length > 1) {
      if (!/^u[0-9a-fA-F]{4}$/.test(escaped)) throw new PropertiesError('malformed \\uXXXX escape', line);
      return String.fromCharCode(parseInt(escaped.slice(1), 16));
    }
    return ESCAPES[escaped] ?? escaped;
  });
}

class PropertiesError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

function splitKeyValue({ text, line }: LogicalLine): [string, string] {
  let end = 0;
  while (end < text.length) {
    const char = text[end];
    if (char === '\\') {
      end += 2;
      continue;
    }
    if (char === '=' || char === ':' || char === ' ' || char === '\t' || char === '\f') break;
    end++;
  }
  const key = unescape(text.slice(0, end), line);
  const rest = text
    .slice(end)
    .replace(/^[ \t\f]*/, '')
    .replace(/^[=:]/, '')
    .replace(/^[ \t\f]*/, '');
  return [key, unescape(rest, line)];
}

/** Parses properties text; duplicate keys are errors (the peer silently keeps the last). */
export function parseProperties(text: string): PropertiesResult {
  const document: Record<string, unknown> = {};
  const lines = new Map<string, number>();
  try {
    for (const logical of logicalLines(text)) {
      const [key, value] = splitKeyValue(logical);
      if (key === '') throw new PropertiesError('a line has a value but no key', logical.line);
      if (lines.has(key))
        throw new PropertiesError(`duplicate key ${key} (first on line ${lines.get(key)})`, logical.line);
      lines.set(key, logical.line);
      const dot = key.indexOf('.');
      if (dot === -1) {
        if (document[key] !== undefined)
          throw new PropertiesError(`${key} is also set entry by entry (${key}.*)`, logical.line);
        document[key] = value;
        continue;
      }
      const [parent, child] = [key.slice(0, dot), key.slice(dot + 1)];
      const existing = document[parent];
      if (typeof existing === 'string')
        throw new PropertiesError(`${parent} is also set as a whole`, logical.line);
      const map = (existing as Record<string, unknown> | undefined) ?? {};
      map[child] = value;
      document[parent] = map;
      if (!lines.has(parent)) lines.set(parent, logical.line);
    }
  } catch (err) {
    if (err instanceof PropertiesError) return { error: err.message, line: err.line };
    throw err;
  }
  return { document, lines };
}

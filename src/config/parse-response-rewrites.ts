/**
 * `routes[i].rewrite_response_headers`: rules that replace a prefix of a response header's value
 * (typically `Location` of an upstream's redirect to its own internal address). Envoy applies them
 * with one fixed Lua script that reads the rules as route metadata (xds/compile/
 * response-header-rewrites.ts), so everything a rule can say is checked here.
 */
import { HEADER_NAME } from './parse-claims-headers.js';
import type { ResponseHeaderRewriteSettings } from './types.js';
import { describe, isPlainObject, type Reader } from './value-readers.js';

/** At most this many rules on one route: each one is a comparison on every response of the route. */
export const MAX_RESPONSE_HEADER_REWRITES = 32;

/** At most this many bytes in a rule's prefix or value (Envoy holds them in the route table). */
export const MAX_REWRITE_TEXT_BYTES = 2048;

const RULE_FIELDS = ['header', 'prefix', 'value'];

/**
 * The rules of one route at `path`, in order, or undefined when unset, null or empty. Each rule
 * is a map of `header` (a header name, not a pseudo-header), `prefix` (non-empty) and `value` (may
 * be empty: the prefix is removed); prefix and value are single-line text of at most
 * MAX_REWRITE_TEXT_BYTES. For each header value the first rule of that header whose prefix starts
 * the value applies, so a rule that an earlier one of the same header always matches first (its
 * prefix starts with the earlier prefix) would never apply: an error, as is every other problem,
 * each at `path[j].<field>`.
 */
export function readResponseHeaderRewrites(
  reader: Reader,
  path: string,
  raw: unknown,
): ResponseHeaderRewriteSettings[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw))
    return reader.problem(path, `expected a list of {header, prefix, value} maps, got ${describe(raw)}`);
  if (raw.length > MAX_RESPONSE_HEADER_REWRITES)
    return reader.problem(
      path,
      `has ${raw.length} rules; a route has at most ${MAX_RESPONSE_HEADER_REWRITES} (each one is checked on every response)`,
    );
  const before = reader.problems.length;
  const rules: ResponseHeaderRewriteSettings[] = [];
  raw.forEach((item, index) => {
    const rule = readRule(reader, `${path}[${index}]`, item);
    if (rule === undefined) return;
    const earlier = rules.findIndex(
      (other) =>
        other.header.toLowerCase() === rule.header.toLowerCase() && rule.prefix.startsWith(other.prefix),
    );
    if (earlier >= 0)
      reader.problem(
        `${path}[${index}].prefix`,
        `never applies: ${path}[${earlier}] comes first for header ${rule.header} and its prefix ${JSON.stringify(rules[earlier]?.prefix)} starts this one, and only the first matching rule of a header applies; put the longer prefix first`,
      );
    rules.push(rule);
  });
  if (reader.problems.length !== before) return undefined;
  return rules.length === 0 ? undefined : rules;
}

function readRule(reader: Reader, path: string, raw: unknown): ResponseHeaderRewriteSettings | undefined {
  if (!isPlainObject(raw))
    return reader.problem(path, `expected a map with header, prefix and value, got ${describe(raw)}`);
  const before = reader.problems.length;
  for (const key of Object.keys(raw).filter((name) => !RULE_FIELDS.includes(name)))
    reader.problem(`${path}.${key}`, 'unknown field; a rule has header, prefix and value');
  const header =
    raw.header === undefined
      ? reader.problem(`${path}.header`, 'is required')
      : readHeader(reader, `${path}.header`, raw.header);
  const prefix =
    raw.prefix === undefined
      ? reader.problem(`${path}.prefix`, 'is required (the start of the header value to replace)')
      : readText(reader, `${path}.prefix`, raw.prefix);
  if (prefix === '') reader.problem(`${path}.prefix`, 'must not be empty (it would match every value)');
  const value =
    raw.value === undefined
      ? reader.problem(`${path}.value`, 'is required (use "" to remove the prefix)')
      : readText(reader, `${path}.value`, raw.value);
  if (
    reader.problems.length !== before ||
    header === undefined ||
    prefix === undefined ||
    value === undefined
  )
    return undefined;
  return { header, prefix, value };
}

function readHeader(reader: Reader, path: string, raw: unknown): string | undefined {
  const header = reader.string(path, raw);
  if (header === undefined) return undefined;
  if (header.startsWith(':'))
    return reader.problem(
      path,
      `"${header}" is a pseudo-header; only regular response headers can be rewritten`,
    );
  if (!HEADER_NAME.test(header)) return reader.problem(path, `"${header}" is not a valid header name`);
  return header;
}

function readText(reader: Reader, path: string, raw: unknown): string | undefined {
  const text = reader.string(path, raw);
  if (text === undefined) return undefined;
  if (/[\r\n\0]/.test(text)) return reader.problem(path, 'must not contain CR, LF or NUL');
  const size = Buffer.byteLength(text, 'utf8');
  if (size > MAX_REWRITE_TEXT_BYTES)
    return reader.problem(path, `is ${size} bytes; the most is ${MAX_REWRITE_TEXT_BYTES}`);
  return text;
}

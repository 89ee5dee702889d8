import { hash } from 'node:crypto';
import jsYaml from 'js-yaml';

/**
 * Digests of a parsed config document, in the shape the splice check compares: one for the
 * route list's items each, one for everything else. Two documents have equal digests exactly when
 * they are structurally equal (as `isDeepStrictEqual` sees parsed YAML: plain objects, arrays,
 * strings, numbers including -0, NaN and infinities, booleans, null), up to SHA-256 collisions.
 * Per-item digests let the process that spliced a document hash only the items it has not hashed
 * before, while a worker hashes a full parse of the same text.
 */
export interface DocumentDigests {
  /** The document without its route list. */
  readonly rest: string;
  /** Each item of the route list, in order (empty when the list is absent or not a list). */
  readonly items: readonly string[];
}

/** Parses `text` as Portcullis parses config YAML and digests it (what the splice-check worker runs). */
export function fullParseDigests(text: string, listKey: string): DocumentDigests {
  let document: unknown;
  try {
    document = jsYaml.load(text, { schema: jsYaml.CORE_SCHEMA, json: false });
  } catch (err) {
    return { rest: `unparsable:${err instanceof Error ? err.message : String(err)}`, items: [] };
  }
  const items = listOf(document, listKey);
  return { rest: restDigest(document, listKey), items: items === undefined ? [] : items.map(valueDigest) };
}

/** The route list under `listKey` of a top-level mapping, if it is one. */
export function listOf(document: unknown, listKey: string): readonly unknown[] | undefined {
  if (document === null || typeof document !== 'object' || Array.isArray(document)) return undefined;
  const list = (document as Record<string, unknown>)[listKey];
  return Array.isArray(list) ? list : undefined;
}

/** The digest of `document` without its route list (the whole value when it has none). */
export function restDigest(document: unknown, listKey: string): string {
  if (listOf(document, listKey) === undefined) return valueDigest(document);
  const { [listKey]: _list, ...rest } = document as Record<string, unknown>;
  return valueDigest(rest);
}

/** SHA-256 of `value`'s stable serialization (object keys sorted). */
export function valueDigest(value: unknown): string {
  return hash('sha256', stableText(value), 'hex');
}

/** A serialization in which equal parsed-YAML values, and only those, give equal text. */
function stableText(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map(stableText).join(',')}]`;
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Object.is(value, -0) ? '-0' : String(value);
    case 'boolean':
      return String(value);
    case 'object': {
      const object = value as Record<string, unknown>;
      const keys = Object.keys(object).sort();
      return `{${keys.map((key) => `${JSON.stringify(key)}:${stableText(object[key])}`).join(',')}}`;
    }
    default:
      // Nothing else comes out of the core schema; name the type so it never equals a real value.
      return `<${typeof value}>`;
  }
}

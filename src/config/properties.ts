import { createRequire } from 'node:module';
import type * as PropertiesParser from 'properties-file/parser';
import type { PropertyNode } from 'properties-file/parser';

const requireModule = createRequire(import.meta.url);

/**
 * The `properties-file` parser, loaded on first use (required as CommonJS, so synchronously, as
 * parsing is): only a properties file needs it, so reading any other format does not load it.
 */
function propertiesParser(): typeof PropertiesParser {
  return requireModule('properties-file/parser') as typeof PropertiesParser;
}

/**
 * Java `.properties` config files (the format the peer's viper reads), parsed by the
 * `properties-file` library (Java's rules: `key=value`, `key: value` or `key value`, `#` and `!`
 * comments, backslash continuations and escapes). All values are strings; the option readers
 * coerce them as they do environment variables (lists comma-separated, maps and routes as JSON).
 * A key with a dot, `idp_request_params.prompt=login`, sets one entry of a map option (split at
 * the first dot).
 */

/**
 * Marks a document whose values are all text, as a properties file's are, so parsing converts them
 * as it converts environment variables (`"true"`, `"30"`) instead of refusing them as it refuses
 * a quoted `"true"` in YAML. A non-enumerable symbol property: it travels with the document
 * through the format layer and never shows up as a key.
 */
export const TEXT_DOCUMENT: unique symbol = Symbol('portcullis.text-document');

/** True for a document parseProperties made (see TEXT_DOCUMENT). */
export function isTextDocument(document: object): boolean {
  return (document as { [TEXT_DOCUMENT]?: true })[TEXT_DOCUMENT] === true;
}

/** The parsed document, a line number per key path, or the first problem (with its line when known). */
export type PropertiesResult =
  | { readonly document: Record<string, unknown>; readonly lines: Map<string, number> }
  | { readonly error: string; readonly line: number | undefined };

/**
 * Parses properties text. Duplicate keys are errors (Java and the peer silently keep the last),
 * and so is a map option set both whole and entry by entry. A malformed `\uXXXX` escape is an
 * error too; the library does not say where, so its line is the first line holding that escape.
 */
export function parseProperties(text: string): PropertiesResult {
  const { Properties, PropertiesNodeType } = propertiesParser();
  let nodes: readonly PropertyNode[];
  try {
    nodes = new Properties(text).nodes.filter(
      (node): node is PropertyNode => node.type === PropertiesNodeType.PROPERTY,
    );
  } catch (err) {
    const message = (err as Error).message.split('\n')[0] ?? 'parse error';
    return { error: message, line: lineHolding(text, /'(\\u[^']*)'/.exec(message)?.[1]) };
  }
  const document: Record<string, unknown> = {};
  const lines = new Map<string, number>();
  for (const { key, value, startingLineNumber: line } of nodes) {
    const fail = (error: string): PropertiesResult => ({ error, line });
    if (key === '') return fail('a line has a value but no key');
    const first = lines.get(key);
    if (first !== undefined) return fail(`duplicate key ${key} (first on line ${first})`);
    lines.set(key, line);
    const dot = key.indexOf('.');
    if (dot === -1) {
      if (document[key] !== undefined) return fail(`${key} is also set entry by entry (${key}.*)`);
      document[key] = value;
      continue;
    }
    const [parent, child] = [key.slice(0, dot), key.slice(dot + 1)];
    const existing = document[parent];
    if (typeof existing === 'string') return fail(`${parent} is also set as a whole`);
    document[parent] = { ...(existing as Record<string, unknown> | undefined), [child]: value };
    if (!lines.has(parent)) lines.set(parent, line);
  }
  Object.defineProperty(document, TEXT_DOCUMENT, { value: true });
  return { document, lines };
}

/** The 1-based line of the first occurrence of `fragment` in `text`, if it occurs. */
function lineHolding(text: string, fragment: string | undefined): number | undefined {
  const at = fragment === undefined ? -1 : text.indexOf(fragment);
  return at === -1 ? undefined : text.slice(0, at).split(/\r\n|\r|\n/).length;
}

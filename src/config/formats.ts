import { createRequire } from 'node:module';
import jsYaml from 'js-yaml';
import type * as Toml from 'smol-toml';
import type * as Yaml from 'yaml';
import type { Node } from 'yaml';
import { parseProperties } from './properties.js';

const requireModule = createRequire(import.meta.url);

/**
 * The `yaml` package, loaded on first use (Node's module registry keeps it; required as CommonJS,
 * so it loads synchronously, as parsing is). Only the careful path and key lines need it, and a
 * valid YAML file needs neither, so `validate` and a start-up with a good config do not pay for
 * loading it (about 35 ms, a tenth of parsing 10,000 routes).
 */
function yamlPackage(): typeof Yaml {
  return requireModule('yaml') as typeof Yaml;
}

/** smol-toml, loaded on first use like the `yaml` package: only a TOML file needs it. */
function tomlPackage(): typeof Toml {
  return requireModule('smol-toml') as typeof Toml;
}

/** The config file formats, chosen by file extension. */
export type ConfigFormat = 'yaml' | 'json' | 'toml' | 'properties';

/** File extensions and the format each selects. */
export const FORMAT_BY_EXTENSION: Readonly<Record<string, ConfigFormat>> = {
  '.yaml': 'yaml',
  '.yml': 'yaml',
  '.json': 'json',
  '.toml': 'toml',
  '.properties': 'properties',
  '.props': 'properties',
};

/**
 * A parsed source: the document plus a function giving the 1-based line of each key path (computed
 * only when asked, because it costs far more than parsing), or a syntax error.
 */
export type SourceResult =
  | { readonly document: unknown; readonly lines: () => Map<string, number> }
  | { readonly error: string; readonly line?: number };

/** Deepest nesting of maps and lists a config document may have (real configs need about ten). */
export const MAX_NESTING_DEPTH = 64;

/** Most alias expansions the `yaml` package may make in one document (its alias-bomb guard). */
const MAX_ALIAS_COUNT = 100;

/**
 * Parses config text in `format`. Syntax errors come back as a one-line message with the line
 * number, never as an exception; key lines let every later problem point at its line. Documents
 * nested deeper than MAX_NESTING_DEPTH are refused with the line where the limit is crossed, so
 * neither the parsers nor the validators after them recurse without bound: js-yaml (YAML, and
 * JSON for that line) and smol-toml stop at the limit while parsing; JSON.parse does not recurse
 * on the stack, and a document deepened by YAML aliases or TOML table headers is measured after.
 */
export function parseSource(text: string, format: ConfigFormat): SourceResult {
  try {
    return format === 'yaml' ? parseYaml(text) : parseOther(text, format);
  } catch (err) {
    // A backstop: a parser that still ran out of stack met the nesting limit, at an unknown line.
    if (isStackOverflow(err)) return tooDeep(format, undefined);
    throw err;
  }
}

const LABELS: Readonly<Record<ConfigFormat, string>> = {
  yaml: 'YAML',
  json: 'JSON',
  toml: 'TOML',
  properties: 'properties',
};

function tooDeep(format: ConfigFormat, line: number | undefined): SourceResult {
  return {
    error: `malformed ${LABELS[format]}: maps and lists are nested more than ${MAX_NESTING_DEPTH} levels deep`,
    ...(line === undefined ? {} : { line }),
  };
}

/** V8's stack overflow: a RangeError, or a SyntaxError when it happens inside a regular expression. */
function isStackOverflow(err: unknown): boolean {
  return err instanceof Error && /Maximum call stack size exceeded/.test(err.message);
}

/**
 * `source`, or the nesting error when its document nests too deep, at the line of the key path
 * where it does (TOML table headers, YAML aliases: what the parsers did not measure).
 */
function withinDepth(source: SourceResult, format: ConfigFormat): SourceResult {
  if ('error' in source) return source;
  const { tooDeepAt } = documentShape(source.document);
  if (tooDeepAt === undefined) return source;
  // The first line of a key under that path (a TOML header names the deepest key), else the nearest above.
  const lines = source.lines();
  let first: number | undefined;
  for (const [key, line] of lines) {
    const under = key.startsWith(tooDeepAt) && /^([.[]|$)/.test(key.slice(tooDeepAt.length));
    if (under && (first === undefined || line < first)) first = line;
  }
  return tooDeep(format, first ?? lineOf(lines, tooDeepAt));
}

/** Thrown from js-yaml's parse events when a node opens past MAX_NESTING_DEPTH, to stop the parse there. */
class NestedTooDeep extends Error {
  constructor(readonly line: number) {
    super('nested too deep');
  }
}

/**
 * js-yaml's `load` that stops as soon as a map or list is nested more than MAX_NESTING_DEPTH
 * levels, throwing NestedTooDeep with its 1-based line (js-yaml recurses per level, so it never
 * gets deep enough to exhaust the stack). js-yaml reports each node's open and close; a node that
 * opens below a node at MAX_NESTING_DEPTH + 1 proves that one a collection (the line is where its
 * first item starts), and an empty collection there is caught as it closes.
 */
function loadWithinDepth(text: string, json: boolean): unknown {
  let depth = 0;
  return jsYaml.load(text, {
    schema: jsYaml.CORE_SCHEMA,
    json,
    listener: (event, state) => {
      if (event === 'open') {
        depth += 1;
        if (depth > MAX_NESTING_DEPTH + 1) throw new NestedTooDeep(state.line + 1);
        return;
      }
      const collection = state.kind === 'mapping' || state.kind === 'sequence';
      if (depth === MAX_NESTING_DEPTH + 1 && collection) throw new NestedTooDeep(state.line + 1);
      depth -= 1;
    },
  });
}

/** Parses JSON, TOML or properties text. */
function parseOther(text: string, format: Exclude<ConfigFormat, 'yaml'>): SourceResult {
  switch (format) {
    case 'json':
      return parseJson(text);
    case 'toml':
      return withinDepth(parseTomlSource(text), 'toml');
    case 'properties': {
      const result = parseProperties(text);
      return 'error' in result
        ? {
            error: `malformed properties: ${result.error}`,
            ...(result.line === undefined ? {} : { line: result.line }),
          }
        : { document: result.document, lines: () => result.lines };
    }
  }
}

/**
 * JSON by JSON.parse (fast, and it does not recurse on the stack). A document nested too deep is
 * read again by js-yaml (JSON is YAML), which stops at the limit, only to find the line.
 */
function parseJson(text: string): SourceResult {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (err) {
    return { error: `malformed JSON: ${jsonMessage(err)}`, ...jsonLine(text, err) };
  }
  if (documentShape(document).tooDeepAt === undefined)
    return { document: document ?? {}, lines: lazyLines(text) };
  try {
    loadWithinDepth(text, true);
  } catch (err) {
    if (err instanceof NestedTooDeep) return tooDeep('json', err.line);
  }
  return tooDeep('json', undefined);
}

/**
 * YAML, by js-yaml first: it parses a 10,000-route file about ten times faster than the `yaml`
 * package, and stops at the nesting limit. js-yaml has no alias limit, so a document with anchors in
 * which it made one object appear twice (an alias of a map or list) is parsed again by the careful path,
 * whose alias limit stops alias bombs; so is anything js-yaml refuses (a syntax error, duplicate
 * keys), for exact messages and lines.
 */
function parseYaml(text: string): SourceResult {
  let document: unknown;
  try {
    document = loadWithinDepth(text, false);
  } catch (err) {
    if (err instanceof NestedTooDeep) return tooDeep('yaml', err.line);
    return parseYamlSource(text, err);
  }
  // An alias needs an anchor (`&name`): text without `&` has none, so js-yaml made a tree (no object
  // in two places) whose depth its listener measured already, and there is nothing to walk.
  if (text.includes('&')) {
    const shape = documentShape(document);
    if (shape.shared || shape.tooDeepAt !== undefined) return withinDepth(parseYamlSource(text), 'yaml');
  }
  return { document: document ?? {}, lines: lazyLines(text) };
}

/** Key lines computed with the `yaml` package on first use only (JSON is YAML, so it works for both). */
function lazyLines(text: string): () => Map<string, number> {
  let lines: Map<string, number> | undefined;
  return () => {
    if (lines === undefined) {
      const { LineCounter, parseDocument } = yamlPackage();
      const lineCounter = new LineCounter();
      const document = parseDocument(text, { lineCounter, prettyErrors: false });
      lines = yamlKeyLines(document.contents, lineCounter);
    }
    return lines;
  };
}

/**
 * The careful path: the `yaml` package, with exact error lines, unique keys and an alias limit.
 * js-yaml's `refusal`, when given, is what to report if the `yaml` package runs out of stack (it
 * recurses per level, and js-yaml stopped at a syntax error before seeing how deep the rest goes).
 */
function parseYamlSource(text: string, refusal?: unknown): SourceResult {
  const { LineCounter, parseDocument } = yamlPackage();
  const lineCounter = new LineCounter();
  let document: ReturnType<typeof Yaml.parseDocument>;
  try {
    document = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  } catch (err) {
    if (refusal instanceof jsYaml.YAMLException && isStackOverflow(err))
      return { error: `malformed YAML: ${refusal.reason}`, line: refusal.mark.line + 1 };
    throw err;
  }
  if (document.errors.length > 0) {
    const first = document.errors[0];
    const line = first === undefined ? undefined : lineCounter.linePos(first.pos[0]).line;
    return {
      error: `malformed YAML: ${first?.message.split('\n')[0] ?? 'parse error'}`,
      ...(line === undefined ? {} : { line }),
    };
  }
  try {
    return {
      document: document.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) ?? {},
      lines: () => yamlKeyLines(document.contents, lineCounter),
    };
  } catch (err) {
    if (isStackOverflow(err)) throw err;
    return { error: `malformed YAML: ${(err as Error).message.split('\n')[0] ?? 'parse error'}` };
  }
}

/**
 * Whether one object appears at two places in a parsed document (YAML aliases), and the key path
 * of the first map or list, in document order, nested more than MAX_NESTING_DEPTH levels (the top
 * is level 1), if any. Iterative, and an object is entered again only at a greater depth than
 * before (so an alias is measured where it sits), which the limit bounds: linear whatever aliases
 * share.
 */
function documentShape(document: unknown): { readonly shared: boolean; readonly tooDeepAt?: string } {
  interface Entry {
    readonly value: object;
    readonly depth: number;
    readonly parent?: Entry;
    readonly key?: string;
  }
  const deepestAt = new Map<object, number>();
  const stack: Entry[] = [];
  if (document !== null && typeof document === 'object') stack.push({ value: document, depth: 1 });
  let shared = false;
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const before = deepestAt.get(entry.value);
    if (before !== undefined) shared = true;
    if (before !== undefined && before >= entry.depth) continue;
    if (entry.depth > MAX_NESTING_DEPTH) return { shared, tooDeepAt: keyPath(entry) };
    deepestAt.set(entry.value, entry.depth);
    const children = Object.entries(entry.value);
    // Pushed last to first, so the walk visits them in document order.
    for (let index = children.length - 1; index >= 0; index -= 1) {
      const [key, value] = children[index] ?? [];
      if (key !== undefined && value !== null && typeof value === 'object') {
        const name = Array.isArray(entry.value) ? `[${key}]` : key;
        stack.push({ value: value as object, depth: entry.depth + 1, parent: entry, key: name });
      }
    }
  }
  return { shared };

  function keyPath(entry: Entry): string {
    let path = '';
    for (let at: Entry | undefined = entry; at?.key !== undefined; at = at.parent)
      path = path === '' || path.startsWith('[') ? `${at.key}${path}` : `${at.key}.${path}`;
    return path;
  }
}

/** The line of `path`, or of its nearest ancestor with a known line (`routes[1].policy` for deeper keys). */
export function lineOf(lines: ReadonlyMap<string, number>, path: string): number | undefined {
  for (let current = path; current !== ''; current = current.replace(/\.[^.[\]]+$|\[\d+\]$|^[^.[\]]+$/, '')) {
    const line = lines.get(current);
    if (line !== undefined) return line;
  }
  return undefined;
}

/**
 * The reason from a JSON.parse error without the echo of the input that V8 adds (the file may
 * hold secrets): "Unexpected token '}'", "Unexpected end of JSON input".
 */
function jsonMessage(err: unknown): string {
  const message = (err as Error).message;
  const token = /^Unexpected token '?(.)'?,/.exec(message);
  if (token !== null) return `unexpected "${token[1]}"`;
  const reason = message
    .replace(/, "[\s\S]*" is not valid JSON$/, '')
    .replace(/( in JSON)? at position \d+[\s\S]*$/, '')
    .split('\n')[0];
  return reason === undefined || reason === '' ? 'parse error' : reason[0]?.toLowerCase() + reason.slice(1);
}

/**
 * The line of a JSON syntax error. V8 gives a position for some errors only, so this finds the
 * shortest prefix of the text that already fails before its own end (parsing is left to right,
 * so that is monotonic and a binary search finds it).
 */
function jsonLine(text: string, err: unknown): { line?: number } {
  const position = /position (\d+)/.exec((err as Error).message)?.[1];
  if (position !== undefined) return { line: text.slice(0, Number(position)).split('\n').length };
  const failsInside = (length: number): boolean => {
    try {
      JSON.parse(text.slice(0, length));
      return false;
    } catch (prefixError) {
      const message = (prefixError as Error).message;
      const at = /position (\d+)/.exec(message)?.[1];
      return !/end of JSON input|Unterminated/.test(message) && (at === undefined || Number(at) < length);
    }
  };
  let [low, high] = [0, text.length];
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if (failsInside(middle)) high = middle;
    else low = middle + 1;
  }
  return { line: text.slice(0, Math.max(0, low - 1)).split('\n').length };
}

/** Maps key paths (`routes[2].to`) to the 1-based line of that key or item in the YAML source. */
function yamlKeyLines(root: unknown, counter: Yaml.LineCounter): Map<string, number> {
  const { isMap, isSeq } = yamlPackage();
  const lines = new Map<string, number>();
  const visit = (node: unknown, path: string): void => {
    const range = (node as Node | null)?.range;
    if (range !== undefined && range !== null && path !== '') lines.set(path, counter.linePos(range[0]).line);
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = String((pair.key as { value?: unknown } | null)?.value ?? '');
        const child = path === '' ? key : `${path}.${key}`;
        if (pair.value !== null) visit(pair.value, child);
        const keyRange = (pair.key as Node | null)?.range;
        if (keyRange !== undefined && keyRange !== null) lines.set(child, counter.linePos(keyRange[0]).line);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => visit(item, `${path}[${index}]`));
    }
  };
  visit(root, '');
  return lines;
}

/** TOML by smol-toml, which stops at MAX_NESTING_DEPTH levels of nested inline arrays and tables. */
function parseTomlSource(text: string): SourceResult {
  const { parse: parseToml, TomlError } = tomlPackage();
  try {
    return {
      document: parseToml(text, { maxDepth: MAX_NESTING_DEPTH }),
      lines: () => tomlKeyLines(text),
    };
  } catch (err) {
    if (err instanceof TomlError) {
      if (/excessively nested/.test(err.message)) return tooDeep('toml', err.line);
      const message = err.message.split('\n')[0]?.replace(/^Invalid TOML document: /, '') ?? 'parse error';
      return { error: `malformed TOML: ${message}`, line: err.line };
    }
    return { error: `malformed TOML: ${(err as Error).message.split('\n')[0] ?? 'parse error'}` };
  }
}

/**
 * Best-effort key lines for TOML: `key = value` under the current `[table]` or `[[array]]`
 * header (array tables numbered in order, `[[routes]]` -> `routes[0]`). Dotted keys and inline
 * tables map to their first line.
 */
function tomlKeyLines(text: string): Map<string, number> {
  const lines = new Map<string, number>();
  const arrayCounts = new Map<string, number>();
  let prefix = '';
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = index + 1;
    const header = /^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$/.exec(raw);
    if (header !== null) {
      const name = nestUnderArrays(
        (header[2] ?? '').replace(/\s*\.\s*/g, '.').replace(/"/g, ''),
        arrayCounts,
      );
      if (header[1] === '[[') {
        const count = arrayCounts.get(name) ?? 0;
        arrayCounts.set(name, count + 1);
        prefix = `${name}[${count}]`;
      } else {
        prefix = name;
      }
      if (!lines.has(prefix)) lines.set(prefix, line);
      return;
    }
    const key = /^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_.\-/ ]+?)\s*=/.exec(raw)?.[1];
    if (key === undefined) return;
    const clean = key.replace(/^["']|["']$/g, '');
    const path = prefix === '' ? clean : `${prefix}.${clean}`;
    if (!lines.has(path)) lines.set(path, line);
  });
  return lines;
}

/** `routes.policy` after `[[routes]]` #2 is `routes[1].policy`: nests a header under open array tables. */
function nestUnderArrays(name: string, arrayCounts: ReadonlyMap<string, number>): string {
  const parts = name.split('.');
  let prefix = '';
  parts.forEach((part, index) => {
    prefix = prefix === '' ? part : `${prefix}.${part}`;
    const count = arrayCounts.get(prefix);
    if (count !== undefined && index < parts.length - 1) prefix = `${prefix}[${count - 1}]`;
  });
  return prefix;
}

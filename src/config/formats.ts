import { parse as parseToml, TomlError } from 'smol-toml';
import jsYaml from 'js-yaml';
import { isMap, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { parseProperties } from './properties.js';

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
 * nested deeper than MAX_NESTING_DEPTH are refused, so neither the parsers nor the validators
 * after them recurse without bound.
 */
export function parseSource(text: string, format: ConfigFormat): SourceResult {
  try {
    return format === 'yaml' ? parseYaml(text) : withinDepth(parseOther(text, format), format);
  } catch (err) {
    // The parsers recurse per nesting level; a stack overflow is the nesting limit, reached early.
    if (err instanceof RangeError) return tooDeep(format);
    throw err;
  }
}

const LABELS: Readonly<Record<ConfigFormat, string>> = {
  yaml: 'YAML',
  json: 'JSON',
  toml: 'TOML',
  properties: 'properties',
};

function tooDeep(format: ConfigFormat): SourceResult {
  return {
    error: `malformed ${LABELS[format]}: maps and lists are nested more than ${MAX_NESTING_DEPTH} levels deep`,
  };
}

/** `source`, or the nesting error when its document nests too deep. */
function withinDepth(source: SourceResult, format: ConfigFormat): SourceResult {
  return 'error' in source || documentShape(source.document).depth <= MAX_NESTING_DEPTH
    ? source
    : tooDeep(format);
}

/** Parses JSON, TOML or properties text. */
function parseOther(text: string, format: Exclude<ConfigFormat, 'yaml'>): SourceResult {
  switch (format) {
    case 'json': {
      let document: unknown;
      try {
        document = JSON.parse(text);
      } catch (err) {
        return { error: `malformed JSON: ${jsonMessage(err)}`, ...jsonLine(text, err) };
      }
      return { document: document ?? {}, lines: lazyLines(text) };
    }
    case 'toml':
      return parseTomlSource(text);
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
 * YAML, by js-yaml first: it parses a 10,000-route file about ten times faster than the `yaml`
 * package. js-yaml has no alias limit, so a document in which it made one object appear twice (an
 * alias of a map or list) is parsed again by the careful path, whose alias limit stops alias
 * bombs; so is anything js-yaml refuses (a syntax error, duplicate keys), for exact messages and
 * lines.
 */
function parseYaml(text: string): SourceResult {
  let document: unknown;
  try {
    document = jsYaml.load(text, { schema: jsYaml.CORE_SCHEMA, json: false });
  } catch {
    return withinDepth(parseYamlSource(text), 'yaml');
  }
  const shape = documentShape(document);
  if (shape.depth > MAX_NESTING_DEPTH) return tooDeep('yaml');
  if (shape.shared) return withinDepth(parseYamlSource(text), 'yaml');
  return { document: document ?? {}, lines: lazyLines(text) };
}

/** Key lines computed with the `yaml` package on first use only (JSON is YAML, so it works for both). */
function lazyLines(text: string): () => Map<string, number> {
  let lines: Map<string, number> | undefined;
  return () => {
    if (lines === undefined) {
      const lineCounter = new LineCounter();
      const document = parseDocument(text, { lineCounter, prettyErrors: false });
      lines = yamlKeyLines(document.contents, lineCounter);
    }
    return lines;
  };
}

/** The careful path: the `yaml` package, with exact error lines, unique keys and an alias limit. */
function parseYamlSource(text: string): SourceResult {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
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
    if (err instanceof RangeError) throw err;
    return { error: `malformed YAML: ${(err as Error).message.split('\n')[0] ?? 'parse error'}` };
  }
}

/**
 * How deep the maps and lists of a parsed document nest (1 for the top; the walk stops once past
 * MAX_NESTING_DEPTH), and whether one object appears at two places (YAML aliases). Iterative, and
 * each object is entered once, so the walk is linear whatever aliases share.
 */
function documentShape(document: unknown): { readonly depth: number; readonly shared: boolean } {
  const seen = new Set<object>();
  const stack: { readonly value: object; readonly depth: number }[] = [];
  const push = (value: unknown, depth: number): void => {
    if (value !== null && typeof value === 'object') stack.push({ value, depth });
  };
  push(document, 1);
  let deepest = 0;
  let shared = false;
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (seen.has(next.value)) {
      shared = true;
      continue;
    }
    seen.add(next.value);
    deepest = Math.max(deepest, next.depth);
    if (deepest > MAX_NESTING_DEPTH) break;
    for (const child of Object.values(next.value)) push(child, next.depth + 1);
  }
  return { depth: deepest, shared };
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
function yamlKeyLines(root: unknown, counter: LineCounter): Map<string, number> {
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

function parseTomlSource(text: string): SourceResult {
  try {
    return { document: parseToml(text), lines: () => tomlKeyLines(text) };
  } catch (err) {
    if (err instanceof TomlError) {
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

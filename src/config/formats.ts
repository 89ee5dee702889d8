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

/**
 * Parses config text in `format`. Syntax errors come back as a one-line message with the line
 * number, never as an exception; key lines let every later problem point at its line.
 */
export function parseSource(text: string, format: ConfigFormat): SourceResult {
  switch (format) {
    case 'yaml':
      return fastYamlSource(text) ?? parseYamlSource(text, 'YAML');
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
        ? { error: `malformed properties: ${result.error}`, line: result.line }
        : { document: result.document, lines: () => result.lines };
    }
  }
}

/** Anchors and aliases (`&a`, `*a`): documents with them take the careful path (alias-bomb limits). */
const ANCHOR_OR_ALIAS = /(^|[\s[{,:-])[&*][^\s]/m;

/** True when YAML `text` may take the fast path (and be spliced): no anchors or aliases anywhere. */
export function fastYamlEligible(text: string): boolean {
  return !ANCHOR_OR_ALIAS.test(text);
}

/**
 * The fast path for well-formed YAML without anchors: js-yaml parses a 10,000-route file about ten
 * times faster than the `yaml` package, which a reload at that size needs. Anything unusual (a
 * syntax error, anchors, duplicate keys) returns undefined and goes to the careful path, which
 * gives exact messages and lines.
 */
function fastYamlSource(text: string): SourceResult | undefined {
  if (!fastYamlEligible(text)) return undefined;
  try {
    const document = jsYaml.load(text, { schema: jsYaml.CORE_SCHEMA, json: false });
    return { document: document ?? {}, lines: lazyLines(text) };
  } catch {
    return undefined;
  }
}

/** Key lines computed with the `yaml` package on first use only (JSON is YAML, so it works for both). */
export function lazyLines(text: string): () => Map<string, number> {
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

function parseYamlSource(text: string, label: string): SourceResult {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  if (document.errors.length > 0) {
    const first = document.errors[0];
    const line = first === undefined ? undefined : lineCounter.linePos(first.pos[0]).line;
    return {
      error: `malformed ${label}: ${first?.message.split('\n')[0] ?? 'parse error'}`,
      ...(line === undefined ? {} : { line }),
    };
  }
  try {
    return {
      document: document.toJS({ maxAliasCount: 100 }) ?? {},
      lines: () => yamlKeyLines(document.contents, lineCounter),
    };
  } catch (err) {
    return { error: `malformed ${label}: ${(err as Error).message.split('\n')[0] ?? 'parse error'}` };
  }
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

import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { isMap, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import type { Problem } from '../shared/errors.js';
import { parseConfig, type ParseResult } from './parse-config.js';

/** Largest config file accepted; bigger files are almost certainly a mistake and would stall a reload. */
export const MAX_CONFIG_BYTES = 32 * 1024 * 1024;

const FORMATS: Record<string, 'yaml' | 'json'> = { '.yaml': 'yaml', '.yml': 'yaml', '.json': 'json' };

/** Result of loading a config file: the parse result plus every file it read (for the watcher). */
export interface LoadResult extends ParseResult {
  readonly filesRead: readonly string[];
}

/**
 * Reads and parses a config file, then validates it with the environment. Problems carry the
 * YAML line where the key is; a malformed file gives its own line-numbered error, never a stack
 * trace. Every referenced file read is listed so the reload loop can watch it.
 */
export function loadConfigFile(path: string, env: Readonly<Record<string, string | undefined>>): LoadResult {
  const filesRead = [path];
  const fail = (message: string, line?: number): LoadResult => ({
    config: undefined,
    problems: [{ path: '', message: `${path}: ${message}`, ...(line === undefined ? {} : { line }) }],
    warnings: [],
    filesRead,
  });
  const format = FORMATS[extname(path).toLowerCase()];
  if (format === undefined) {
    return fail(`unknown config file extension "${extname(path)}"; use .yaml, .yml or .json`);
  }
  let text: string;
  try {
    const bytes = readFileSync(path);
    if (bytes.length > MAX_CONFIG_BYTES) return fail(`file is ${bytes.length} bytes; the limit is ${MAX_CONFIG_BYTES}`);
    text = bytes.toString('utf8');
  } catch (err) {
    return fail(`cannot read config file: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  if (document.errors.length > 0) {
    const first = document.errors[0];
    const line = first?.linePos?.[0].line;
    return fail(`malformed ${format.toUpperCase()}: ${first?.message.split('\n')[0] ?? 'parse error'}`, line);
  }
  const lines = keyLines(document.contents, lineCounter);
  const result = parseConfig({
    document: document.toJS({ maxAliasCount: 100 }) ?? {},
    env,
    readText: (file) => {
      filesRead.push(file);
      return readFileSync(file, 'utf8');
    },
  });
  const withLine = (problem: Problem): Problem => {
    const line = lines.get(problem.path) ?? lines.get(problem.path.replace(/\.[^.[\]]+$|\[\d+\]$/, ''));
    return line === undefined ? problem : { ...problem, line };
  };
  return { ...result, problems: result.problems.map(withLine), warnings: result.warnings.map(withLine), filesRead };
}

/** Maps key paths (`routes[2].to`) to the 1-based line of that key or item in the YAML source. */
function keyLines(root: unknown, counter: LineCounter): Map<string, number> {
  const lines = new Map<string, number>();
  const visit = (node: unknown, path: string): void => {
    const range = (node as Node | null)?.range;
    if (range !== undefined && range !== null && path !== '') lines.set(path, counter.linePos(range[0]).line);
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = String((pair.key as { value?: unknown } | null)?.value ?? '');
        const child = path === '' ? key : `${path}.${key}`;
        const keyRange = (pair.key as Node | null)?.range;
        if (keyRange !== undefined && keyRange !== null) lines.set(child, counter.linePos(keyRange[0]).line);
        if (pair.value !== null) visit(pair.value, child);
        if (keyRange !== undefined && keyRange !== null) lines.set(child, counter.linePos(keyRange[0]).line);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => visit(item, `${path}[${index}]`));
    }
  };
  visit(root, '');
  return lines;
}

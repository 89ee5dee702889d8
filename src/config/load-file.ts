import { readFileSync, statSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import type { Problem } from '../shared/errors.js';
import { FORMAT_BY_EXTENSION, lineOf, parseSource } from './formats.js';
import { parseConfig, type ParseResult, type RouteCache } from './parse-config.js';
import { decodeUtf8Strictly, invalidUtf8Message } from './utf8.js';

/** Largest config file accepted; bigger files are almost certainly a mistake and would stall a reload. */
export const MAX_CONFIG_BYTES = 32 * 1024 * 1024;

/** Files up to this size get line numbers on warnings too. */
const SMALL_FILE_BYTES = 256 * 1024;

/** Largest file a config may reference (secrets, certificates, CA bundles). */
export const MAX_REFERENCED_FILE_BYTES = 8 * 1024 * 1024;

/** Result of loading a config file: the parse result plus every file it read (for the watcher). */
export interface LoadResult extends ParseResult {
  readonly filesRead: readonly string[];
}

/**
 * Reads and parses a config file (YAML, JSON, TOML or Java properties, by extension), then
 * validates it with the environment. Problems carry the line where the key is (TOML lines are
 * best effort); a malformed, unreadable or oversized file gives one clear error with the file
 * name and line, never a stack trace. Every referenced file read is listed for the watcher.
 * `read` may already hold the config file's bytes (by absolute path), as the file watcher read
 * and compared them: they are parsed instead of reading the file again. `previousRoutes` is the
 * last good load's `routeCache`, so unchanged routes are not validated again (see RouteCache).
 */
export function loadConfigFile(
  path: string,
  env: Readonly<Record<string, string | undefined>>,
  read?: ReadonlyMap<string, Buffer>,
  previousRoutes?: RouteCache,
): LoadResult {
  const filesRead = [path];
  const fail = (message: string, line?: number): LoadResult => ({
    config: undefined,
    problems: [{ path: '', message: `${path}: ${message}`, ...(line === undefined ? {} : { line }) }],
    warnings: [],
    routeCache: new Map(),
    routesValidated: 0,
    filesRead,
  });
  const extension = extname(path).toLowerCase();
  const format = FORMAT_BY_EXTENSION[extension];
  if (format === undefined) {
    const known = Object.keys(FORMAT_BY_EXTENSION).join(', ');
    return fail(`unknown config file extension "${extension || '(none)'}"; use one of ${known}`);
  }
  const text = readLimited(path, MAX_CONFIG_BYTES, read?.get(resolve(path)));
  if (typeof text !== 'string') return fail(text.error);
  const source = parseSource(text, format);
  if ('error' in source) return fail(source.error, source.line);
  const result = parseConfig({
    document: source.document,
    env,
    ...(previousRoutes === undefined ? {} : { previousRoutes }),
    readText: (file) => {
      filesRead.push(file);
      const content = readLimited(file, MAX_REFERENCED_FILE_BYTES);
      if (typeof content !== 'string') throw Object.assign(new Error(content.error), { code: content.code });
      return content;
    },
  });
  // Lines cost more than parsing a large file: find them for problems always, and for warnings
  // only in files small enough that it does not slow a reload down.
  const wantLines =
    result.problems.length > 0 || (result.warnings.length > 0 && text.length < SMALL_FILE_BYTES);
  const lines = wantLines ? source.lines() : new Map<string, number>();
  const withLine = (problem: Problem): Problem => {
    const line = lineOf(lines, problem.path);
    return line === undefined ? problem : { ...problem, line };
  };
  return {
    ...result,
    problems: result.problems.map(withLine),
    warnings: result.warnings.map(withLine),
    filesRead,
  };
}

/**
 * Reads a UTF-8 file of at most `limit` bytes, or says why not (no stack trace). Invalid UTF-8 is
 * refused with its line (see decodeUtf8Strictly), never replaced.
 */
function readLimited(path: string, limit: number, bytes?: Buffer): string | { error: string; code?: string } {
  const decode = (content: Buffer): string | { error: string; code?: string } => {
    const text = decodeUtf8Strictly(content);
    if (typeof text === 'string') return text;
    return { error: invalidUtf8Message('the file', text.invalidUtf8Line), code: 'EILSEQ' };
  };
  if (bytes !== undefined) {
    if (bytes.length > limit)
      return { error: `file is ${bytes.length} bytes; the limit is ${limit}`, code: 'EFBIG' };
    return decode(bytes);
  }
  try {
    const size = statSync(path).size;
    if (size > limit) return { error: `file is ${size} bytes; the limit is ${limit}`, code: 'EFBIG' };
    return decode(readFileSync(path));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reasons: Record<string, string> = {
      ENOENT: 'no such file',
      EACCES: 'permission denied',
      EISDIR: 'it is a directory',
    };
    const reason =
      code === undefined ? (err as Error).message : `${code} (${reasons[code] ?? 'read failed'})`;
    return { error: `cannot read config file: ${reason}`, ...(code === undefined ? {} : { code }) };
  }
}

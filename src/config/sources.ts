import { canonicalJson } from '../shared/canonical-json.js';
import { envName, GLOBAL_OPTIONS, KNOWN_GLOBAL_KEYS, type OptionSpec } from './option-table.js';
import {
  findRemoved,
  PEER_ONLY_OPTIONS,
  PEER_ONLY_REFUSED,
  PEER_ONLY_REPLACED,
  peerOnlyRefusal,
  REMOVED_OPTIONS,
  removedMessage,
} from './removed-options.js';
import { closestKey, type Reader, type ValueSyntax } from './value-readers.js';

/** Reads a file's text; injected so parsing stays testable and the watcher knows what was read. */
export type ReadText = (path: string) => string;

/** Environment variables, as `process.env` gives them. */
export type Env = Readonly<Record<string, string | undefined>>;

/** One option's raw value and where it came from; `path` is what messages name (key or env var). */
export interface RawValue {
  readonly value: unknown;
  readonly path: string;
  readonly source: 'env' | 'file' | 'default';
  /** `text` for environment variables, properties files, defaults and `_file` contents. */
  readonly syntax: ValueSyntax;
  /** Set when the value could not be obtained (an unreadable `_file`); the problem is reported. */
  readonly failed?: true;
}

/**
 * Collects every option's raw value by precedence (environment variable, then file key, then the
 * table's default) and checks the keys themselves: removed options, and the peer's options that
 * Portcullis refuses, are errors naming their replacement (in a file or as environment
 * variables), unknown keys are errors with a did-you-mean hint (a misspelled key would silently
 * leave its option at the default), two spellings of one option with different values are an
 * error. An empty environment variable counts as unset. `fileSyntax` says how the document's
 * values are written: `text` for a properties file, `typed` otherwise.
 */
export function collectRawValues(
  reader: Reader,
  document: Record<string, unknown>,
  env: Env,
  fileSyntax: ValueSyntax = 'typed',
): Map<string, RawValue> {
  checkTopLevelKeys(reader, document);
  for (const removed of REMOVED_OPTIONS) {
    if (removed.scope === 'global' && isSet(env[envName(removed.key)])) {
      reader.problem(envName(removed.key), removedMessage(removed, envName(removed.key)));
    }
  }
  for (const key of [...Object.keys(PEER_ONLY_REFUSED), ...Object.keys(PEER_ONLY_REPLACED)]) {
    const refusal = peerOnlyRefusal(key);
    if (refusal !== undefined && isSet(env[envName(key)])) reader.problem(envName(key), refusal);
  }
  const values = new Map<string, RawValue>();
  for (const option of GLOBAL_OPTIONS) {
    if (option.kind.type === 'routes') continue;
    const raw = pickRaw(reader, option, document, env, fileSyntax);
    if (raw === undefined) continue;
    if (option.deprecatedFor !== undefined && raw.source !== 'default') {
      reader.warn(raw.path, `is deprecated; use ${option.deprecatedFor}`);
    }
    values.set(option.key, raw);
  }
  return values;
}

function isSet(value: string | undefined): value is string {
  return value !== undefined && value !== '';
}

function pickRaw(
  reader: Reader,
  option: OptionSpec,
  document: Record<string, unknown>,
  env: Env,
  fileSyntax: ValueSyntax,
): RawValue | undefined {
  const spellings = [option.key, ...(option.aliases ?? [])];
  const fromEnv = spellings
    .filter((key) => isSet(env[envName(key)]))
    .map((key) => ({
      value: env[envName(key)],
      path: envName(key),
      source: 'env' as const,
      syntax: 'text' as const,
    }));
  const fromFile = spellings
    .filter((key) => document[key] !== undefined)
    .map((key) => ({ value: document[key], path: key, source: 'file' as const, syntax: fileSyntax }));
  for (const found of [fromEnv, fromFile]) {
    const [first, second] = found;
    if (first !== undefined && second !== undefined && sameValue(first.value, second.value) === false) {
      reader.problem(
        first.path,
        `both ${first.path} and ${second.path} are set, with different values; keep one`,
      );
    }
  }
  const chosen = fromEnv[0] ?? fromFile[0];
  if (chosen !== undefined) {
    if (chosen.value === null) {
      reader.problem(chosen.path, 'has no value; give one, or remove the key to use the default');
      return undefined;
    }
    return chosen;
  }
  return option.default === undefined
    ? undefined
    : { value: option.default, path: option.key, source: 'default', syntax: 'text' };
}

/**
 * Whether two spellings of one option hold the same value: a text (from the environment) as the
 * JSON it parses to, so `8080` and 8080 are the same and `a` and `b` are not.
 */
export function sameValue(a: unknown, b: unknown): boolean {
  const normalise = (value: unknown): string => {
    if (typeof value !== 'string') return canonicalJson(value);
    try {
      return canonicalJson(JSON.parse(value));
    } catch {
      return canonicalJson(value);
    }
  };
  return normalise(a) === normalise(b);
}

function checkTopLevelKeys(reader: Reader, document: Record<string, unknown>): void {
  for (const key of Object.keys(document)) {
    if (KNOWN_GLOBAL_KEYS.includes(key)) continue;
    const removed = findRemoved(key, 'global');
    const refusal = peerOnlyRefusal(key);
    if (removed !== undefined) {
      reader.problem(key, removedMessage(removed));
    } else if (findRemoved(key, 'route') !== undefined) {
      reader.problem(key, `is a route option; move it into a route under routes`);
    } else if (refusal !== undefined) {
      reader.problem(key, refusal);
    } else if (PEER_ONLY_OPTIONS.includes(key)) {
      reader.warn(key, 'is not supported by Portcullis; ignored');
    } else {
      const hint = closestKey(key, KNOWN_GLOBAL_KEYS);
      reader.problem(key, `unknown option${hint === undefined ? '; remove it' : ` (did you mean ${hint}?)`}`);
    }
  }
}

/**
 * Folds `<key>_file` options into their key: the file's content, with surrounding whitespace
 * (such as the trailing newline editors add) trimmed, becomes the value, and messages about it
 * name the `_file` key. Setting both forms is an error naming both; so is an unreadable or
 * empty file. The file's content never appears in a message.
 */
export function resolveFileOptions(reader: Reader, values: Map<string, RawValue>, readText: ReadText): void {
  for (const option of GLOBAL_OPTIONS) {
    if (option.kind.type !== 'file') continue;
    const fileRaw = values.get(option.key);
    if (fileRaw === undefined) continue;
    values.delete(option.key);
    const target = option.kind.of;
    const direct = values.get(target);
    if (direct !== undefined && direct.source !== 'default') {
      reader.problem(fileRaw.path, `set only one of ${target} and ${option.key}`);
      values.set(target, { ...direct, failed: true });
      continue;
    }
    const content = readFileOption(reader, fileRaw, readText);
    if (content === undefined) {
      values.set(target, {
        value: undefined,
        path: fileRaw.path,
        source: fileRaw.source,
        syntax: 'text',
        failed: true,
      });
    } else {
      values.set(target, { value: content, path: fileRaw.path, source: fileRaw.source, syntax: 'text' });
    }
  }
}

/** Reads the file a `*_file` option names; undefined (with a problem) when unreadable or empty. */
export function readFileOption(reader: Reader, raw: RawValue, readText: ReadText): string | undefined {
  const file = reader.string(raw.path, raw.value);
  if (file === undefined) return undefined;
  if (file.trim() === '') return reader.problem(raw.path, 'is empty; give the path of a file');
  let text: string;
  try {
    text = readText(file.trim());
  } catch (err) {
    return reader.problem(raw.path, `cannot read ${file.trim()}: ${fileErrorText(err)}`);
  }
  const trimmed = text.trim();
  if (trimmed === '') return reader.problem(raw.path, `${file.trim()} is empty`);
  return trimmed;
}

/** A short reason for a failed file read (`ENOENT (no such file)`), never a stack trace. */
export function fileErrorText(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  const reasons: Record<string, string> = {
    ENOENT: 'no such file',
    EACCES: 'permission denied',
    EISDIR: 'it is a directory',
    EFBIG: 'the file is too large',
  };
  if ((code === 'EFBIG' || code === 'EILSEQ') && err instanceof Error) return err.message;
  if (code !== undefined) return `${code} (${reasons[code] ?? 'read failed'})`;
  return err instanceof Error ? err.message : String(err);
}

import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, extname, isAbsolute, resolve } from 'node:path';
import { stringify as stringifyToml } from 'smol-toml';
import { Document, parseDocument } from 'yaml';
import { FORMAT_BY_EXTENSION, parseSource, type ConfigFormat } from '../config/formats.js';
import { migrateDocument, type MigrationChange } from '../config/migrate.js';
import { errorMessage } from '../shared/errors.js';

/** Options of `portcullis config migrate`. */
export interface MigrateOptions {
  /** Rewrite the file in place (keeping `<file>.bak`) instead of printing the result. */
  readonly write: boolean;
}

/**
 * `portcullis config migrate --config old.yaml`: rewrites removed and renamed options into
 * today's form and lists what changed. By default the new config goes to `out` (redirect it to a
 * file) and the changes to `err`; with `write` the file is replaced, the original kept as
 * `<file>.bak`, and the changes go to `out`. YAML keeps its comments and key order. Exit 0 when
 * everything was migrated, 1 when something needs a person (listed with `!`) or the file cannot
 * be read.
 */
export function runMigrate(
  configPath: string,
  options: MigrateOptions,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): number {
  const format = FORMAT_BY_EXTENSION[extname(configPath).toLowerCase()];
  if (format === undefined) {
    err.write(
      `${configPath}: unknown config file extension; use one of ${Object.keys(FORMAT_BY_EXTENSION).join(', ')}\n`,
    );
    return 1;
  }
  let text: string;
  try {
    text = readFileSync(configPath, 'utf8');
  } catch (error) {
    err.write(`${configPath}: cannot read config file: ${errorMessage(error)}\n`);
    return 1;
  }
  const doc = loadDocument(text, format);
  if (typeof doc === 'string') {
    err.write(`${configPath}: ${doc}\n`);
    return 1;
  }
  const readText = (file: string): string =>
    readFileSync(isAbsolute(file) ? file : resolve(dirname(configPath), file), 'utf8');
  const changes = migrateDocument(doc, readText);
  const report = options.write ? out : err;
  if (changes.length === 0) {
    report.write(`${configPath}: nothing to migrate\n`);
    if (!options.write) out.write(text);
    return 0;
  }
  const rendered = render(doc, format);
  if (options.write) {
    copyFileSync(configPath, `${configPath}.bak`);
    writeFileSync(configPath, rendered);
  } else {
    out.write(rendered);
  }
  report.write(
    `${configPath}: ${changes.length} change${changes.length === 1 ? '' : 's'}${options.write ? ` (original kept as ${configPath}.bak)` : ''}:\n`,
  );
  for (const change of changes) report.write(formatChange(change));
  return changes.some((change) => change.manual === true) ? 1 : 0;
}

function formatChange(change: MigrationChange): string {
  return `  ${change.manual === true ? '!' : '-'} ${change.path === '' ? '' : `${change.path}: `}${change.message}\n`;
}

/** The file as a YAML Document (for every format), or a syntax error message. */
function loadDocument(text: string, format: ConfigFormat): Document | string {
  if (format === 'yaml') {
    const doc = parseDocument(text, { uniqueKeys: true });
    return doc.errors.length > 0 ? `malformed YAML: ${doc.errors[0]?.message.split('\n')[0] ?? ''}` : doc;
  }
  const source = parseSource(text, format);
  if ('error' in source) return `${source.error}${source.line === undefined ? '' : ` (line ${source.line})`}`;
  const document = source.document as Record<string, unknown>;
  if (format === 'properties') {
    for (const key of ['routes', 'policy']) {
      if (typeof document[key] === 'string') {
        try {
          document[key] = JSON.parse(document[key]);
        } catch {
          // leave it: validation reports it
        }
      }
    }
  }
  return new Document(document);
}

function render(doc: Document, format: ConfigFormat): string {
  const data = doc.toJS() as Record<string, unknown>;
  switch (format) {
    case 'yaml':
      return doc.toString({ flowCollectionPadding: false });
    case 'json':
      return `${JSON.stringify(data, null, 2)}\n`;
    case 'toml':
      return `${stringifyToml(data)}\n`;
    case 'properties':
      return renderProperties(data);
  }
}

/** Properties output: scalars as text, lists of scalars comma-separated, anything else as JSON. */
function renderProperties(data: Record<string, unknown>): string {
  const escape = (text: string, key: boolean): string =>
    text
      .replace(/\\/g, '\\\\')
      .replace(/\n/g, '\\n')
      .replace(/\r/g, '\\r')
      .replace(/\t/g, '\\t')
      .replace(key ? /[=: ]/g : /^ /, (char) => `\\${char}`);
  const lines = Object.entries(data).map(([key, value]) => {
    const scalarList =
      Array.isArray(value) && value.every((item) => typeof item !== 'object' || item === null);
    const text =
      typeof value === 'string'
        ? value
        : scalarList
          ? (value as unknown[]).join(',')
          : typeof value === 'object' && value !== null
            ? JSON.stringify(value)
            : String(value);
    return `${escape(key, true)}=${escape(text, false)}`;
  });
  return `${lines.join('\n')}\n`;
}

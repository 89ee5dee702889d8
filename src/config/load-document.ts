import { parseConfig, type RouteCache } from './parse-config.js';
import type { LoadResult } from './load-file.js';

/** A config document and the environment it is read with (see translate's PushedDocument). */
export interface DocumentInput {
  readonly document: Readonly<Record<string, unknown>>;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/**
 * Validates a pushed document exactly as `loadConfigFile` validates a parsed file (same
 * parseConfig, same environment precedence, same route cache), without a file: it names no files
 * and reads none. A pushed document carries its values inline (a source reads its Secrets
 * itself), so a `*_file` key in it is refused (the read fails with its key path) rather than
 * letting the source's input make this process read its own files.
 */
export function loadConfigDocument(pushed: DocumentInput, previousRoutes?: RouteCache): LoadResult {
  const result = parseConfig({
    document: pushed.document,
    env: pushed.env,
    ...(previousRoutes === undefined ? {} : { previousRoutes }),
    readText: () => {
      throw Object.assign(new Error('a pushed config document reads no files'), { code: 'EACCES' });
    },
  });
  return { ...result, filesRead: [] };
}

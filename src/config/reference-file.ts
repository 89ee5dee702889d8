import { format, resolveConfig } from 'prettier';
import { renderReference } from './reference-doc.js';

/** Where the generated option reference lives. */
export const REFERENCE_PATH = new URL('../../docs/reference.md', import.meta.url).pathname;

/**
 * docs/reference.md exactly as it must be on disk: the rendered tables formatted by prettier
 * with the repository's settings, so the docs generator, the drift test and `prettier --check`
 * agree byte for byte. (prettier is a dev dependency: only the generator and tests load this.)
 */
export async function referenceMarkdown(): Promise<string> {
  const options = (await resolveConfig(REFERENCE_PATH)) ?? {};
  return format(renderReference(), { ...options, parser: 'markdown' });
}

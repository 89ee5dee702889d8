import { hash } from 'node:crypto';

/**
 * The content key of what compile makes from `input` (JSON data) as `kind` (see
 * `CompiledResource.contentKey`): a SHA-256 of its JSON text. Translate builds IR objects the same
 * way every time, so equal IR gives equal text; two equal objects written with their keys in
 * another order only miss the snapshot's cache, never hit it wrongly.
 */
export function contentKeyOf(kind: string, input: unknown): string {
  return hash('sha256', `${kind}\n${JSON.stringify(input)}`, 'base64');
}

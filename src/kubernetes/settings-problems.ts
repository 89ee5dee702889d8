/**
 * validate's problems about a settings document, named in the settings resource's terms: the
 * key path `idp_provider` becomes `spec.identityProvider.provider`, a value read from a Secret
 * names the field that references it and the Secret's key, and option keys in the message
 * become fields, so the object's status says what to change in the object.
 */
import type { Problem } from '../shared/errors.js';
import { orchestrationField } from '../config/orchestration-fields.js';
import { GLOBAL_OPTIONS } from '../config/option-table.js';
import { renameOptionKeys } from './field-names.js';

/** Where one document path's value came from, when not the field's own value. */
export interface Origin {
  /** The field under `spec`, with its index for a list entry (`spec.certificates[1]`). */
  readonly field: string;
  /** The Secret and key it was read from (`key client_id of Secret ns/name`). */
  readonly note: string;
}

/** True when `path` is `prefix` or a path below it (`prefix.name`, `prefix[3]`). */
export function below(path: string, prefix: string): boolean {
  return (
    path === prefix ||
    (path.startsWith(prefix) && (path[prefix.length] === '.' || path[prefix.length] === '['))
  );
}

/** The longest of `prefixes` that `path` is at or below. */
function longestPrefix(path: string, prefixes: Iterable<string>): string | undefined {
  let best: string | undefined;
  for (const prefix of prefixes) {
    if (below(path, prefix) && (best === undefined || prefix.length > best.length)) best = prefix;
  }
  return best;
}

/** The spec path of a document path, with what to add to the message. */
function locate(path: string, origins: ReadonlyMap<string, Origin>): { path: string; note?: string } {
  const fromOrigin = longestPrefix(path, origins.keys());
  const origin = fromOrigin === undefined ? undefined : origins.get(fromOrigin);
  if (origin !== undefined) return { path: origin.field, note: origin.note };
  const keys = GLOBAL_OPTIONS.flatMap((option) => [option.key, ...(option.aliases ?? [])]);
  const key = longestPrefix(path, keys);
  const option = GLOBAL_OPTIONS.find(
    (candidate) => candidate.key === key || candidate.aliases?.includes(key ?? ''),
  );
  if (key === undefined || option === undefined) return { path };
  const field = orchestrationField(option);
  switch (field.form) {
    case 'value':
      return { path: `spec.${field.path}${path.slice(key.length)}` };
    case 'secret':
      return { path: `spec.${field.path}`, note: `key ${field.key}` };
    case 'left_out':
      return { path: field.instead === undefined ? path : `spec.${field.instead}` };
  }
}

/**
 * `problem` (from parseConfig over a settings document) at the field it came from. `origins`
 * maps document paths whose values came from Secrets to their field and Secret key. Paths that
 * are no option (the document as a whole, an environment variable) stay as they are.
 */
export function fieldProblem(problem: Problem, origins: ReadonlyMap<string, Origin>): Problem {
  const place = locate(problem.path, origins);
  const message = renameOptionKeys(problem.message, 'spec.');
  return { path: place.path, message: place.note === undefined ? message : `${message} (${place.note})` };
}

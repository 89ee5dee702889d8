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
import { entryPlace, specFields, type SpecField } from './spec-fields.js';

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
    case 'provider_map':
      return entryLocation(path.slice(key.length), providerMap(field.path));
    case 'secret':
      return { path: `spec.${field.path}`, note: `key ${field.key}` };
    case 'left_out':
      return { path: field.instead === undefined ? path : `spec.${field.instead}` };
  }
}

/** The provider-map spec field at `path` (`identityProviders`). */
function providerMap(path: string): Extract<SpecField, { form: 'provider_map' }> {
  const field = specFields().find((candidate) => candidate.path === path);
  if (field?.form !== 'provider_map') throw new Error(`${path} is not a provider map`);
  return field;
}

/** `.<name>.<entry key><rest>` of a provider entry's path, as the entry's field. */
const ENTRY_PATH = /^\.([^.[\]]+)(?:\.([a-z_]+))?(.*)$/s;

/**
 * The spec path of a path inside `identity_providers` (`rest` after the key): the entry key
 * becomes its field in the provider (`.corp.provider_url` -> `spec.identityProviders.corp.url`),
 * and a value read from a Secret names the Secret field and its data key.
 */
function entryLocation(
  rest: string,
  field: Extract<SpecField, { form: 'provider_map' }>,
): { path: string; note?: string } {
  const match = ENTRY_PATH.exec(rest);
  const [, name, entryKey, tail] = match ?? [];
  if (name === undefined) return { path: `spec.${field.path}${rest}` };
  const entry = `spec.${field.path}.${name}`;
  if (entryKey === undefined) return { path: `${entry}${tail ?? ''}` };
  const place = entryPlace(field, entryKey);
  if (place === undefined) return { path: `${entry}.${entryKey}${tail ?? ''}` };
  if (place.key !== undefined) return { path: `${entry}.${place.path}`, note: `key ${place.key}` };
  return { path: `${entry}.${place.path}${tail ?? ''}` };
}

/**
 * `text` with each provider entry's key path (`identity_providers.corp.provider`, as validate's
 * messages name an entry's other keys) written as its field (`spec.identityProviders.corp.provider`).
 */
function renameEntryPaths(text: string): string {
  const option = GLOBAL_OPTIONS.find((candidate) => candidate.kind.type === 'identity_providers');
  const field = option === undefined ? undefined : orchestrationField(option);
  if (option === undefined || field?.form !== 'provider_map') return text;
  const map = providerMap(field.path);
  const pattern = new RegExp(`(?<![A-Za-z0-9_.])${option.key}\\.([a-z][a-z0-9_-]*)\\.([a-z_]+)`, 'g');
  return text.replace(pattern, (_whole, name: string, entryKey: string) => {
    const place = entryLocation(`.${name}.${entryKey}`, map);
    return place.note === undefined ? place.path : `${place.path} (${place.note})`;
  });
}

/**
 * `problem` (from parseConfig over a settings document) at the field it came from. `origins`
 * maps document paths whose values came from Secrets to their field and Secret key. Paths that
 * are no option (the document as a whole, an environment variable) stay as they are.
 */
export function fieldProblem(problem: Problem, origins: ReadonlyMap<string, Origin>): Problem {
  const place = locate(problem.path, origins);
  const message = renameOptionKeys(renameEntryPaths(problem.message), 'spec.');
  return { path: place.path, message: place.note === undefined ? message : `${message} (${place.note})` };
}

/**
 * The fields of the Portcullis settings resource's spec, from the option table: the one list
 * both the CRD's schema (crd-schema.ts) and the reading of an object (settings-document.ts) walk,
 * so what the API server accepts and what Portcullis reads cannot differ.
 */
import {
  orchestrationField,
  SECRET_MAP_FIELDS,
  type OrchestrationField,
} from '../config/orchestration-fields.js';
import { GLOBAL_OPTIONS, type OptionSpec } from '../config/option-table.js';
import { ENTRY_KEYS } from '../config/parse-identity-providers.js';

/** One option read from a key of a Secret shared by several options. */
export interface SharedSecretKey {
  readonly option: OptionSpec;
  readonly key: string;
}

/** One field of the spec (its dotted path under `spec`) and how its value becomes options. */
export type SpecField =
  /** The option's value itself. `certificates` is a list of TLS Secret references instead. */
  | { readonly form: 'value'; readonly path: string; readonly option: OptionSpec }
  /** `{name, namespace?, key?}`: one option's value from one key (default `key`) of a Secret. */
  | { readonly form: 'secret_key'; readonly path: string; readonly option: OptionSpec; readonly key: string }
  /** `{name, namespace?}`: several options, each from its fixed key of one Secret. */
  | { readonly form: 'shared_secret'; readonly path: string; readonly keys: readonly SharedSecretKey[] }
  /** `{name, namespace?}`: every data entry of a Secret adds an entry to the map option. */
  | { readonly form: 'secret_map'; readonly path: string; readonly option: OptionSpec }
  /**
   * `identityProviders`: provider name -> the fields of the group `like` (`identityProvider`),
   * each `entry` field at its path inside one provider (`url`, `secret`), reading the same
   * options as the global provider's fields; the document holds them under the entry's keys.
   */
  | {
      readonly form: 'provider_map';
      readonly path: string;
      readonly option: OptionSpec;
      readonly like: string;
      readonly entry: readonly SpecField[];
    };

/** The certificate chain's data key in a `kubernetes.io/tls` Secret (that Secret type's contract). */
export const TLS_CERT_KEY = 'tls.crt';
/** The private key's data key in a `kubernetes.io/tls` Secret. */
export const TLS_KEY_KEY = 'tls.key';

function optionByKey(key: string): OptionSpec {
  const option = GLOBAL_OPTIONS.find((candidate) => candidate.key === key);
  if (option === undefined) throw new Error(`SECRET_MAP_FIELDS names unknown option ${key}`);
  return option;
}

/**
 * Every spec field, in option-table order (a shared Secret where its first option is). Built
 * on each call from the table: cheap, and no module state.
 */
export function specFields(): SpecField[] {
  const fields: SpecField[] = [];
  const shared = new Map<string, SharedSecretKey[]>();
  const maps: { index: number; path: string; option: OptionSpec }[] = [];
  const placed: [OptionSpec, OrchestrationField][] = GLOBAL_OPTIONS.map((option) => [
    option,
    orchestrationField(option),
  ]);
  for (const [option, field] of placed) {
    if (field.form === 'value') fields.push({ form: 'value', path: field.path, option });
    if (field.form === 'provider_map') maps.push({ index: fields.length, path: field.path, option });
    if (field.form !== 'secret') continue;
    if (!field.shared) {
      fields.push({ form: 'secret_key', path: field.path, option, key: field.key });
      continue;
    }
    const keys = shared.get(field.path);
    if (keys !== undefined) {
      keys.push({ option, key: field.key });
      continue;
    }
    const first = [{ option, key: field.key }];
    shared.set(field.path, first);
    fields.push({ form: 'shared_secret', path: field.path, keys: first });
  }
  for (const extra of SECRET_MAP_FIELDS) {
    fields.push({ form: 'secret_map', path: extra.path, option: optionByKey(extra.of) });
  }
  // Inserted last first, so earlier indexes still hold.
  for (const { index, path, option } of maps.reverse()) {
    fields.splice(index, 0, { form: 'provider_map', path, option, ...providerEntry(fields) });
  }
  return fields;
}

/** The entry key of the option a provider entry's value is read as (`idp_provider_url` -> `provider_url`). */
export function entryKeyOf(optionKey: string): string | undefined {
  return Object.keys(ENTRY_KEYS).find((key) => ENTRY_KEYS[key] === optionKey);
}

/**
 * One provider's fields: the global fields whose options are the entry's (parse-identity-providers.ts
 * reads each entry key as one), moved from their group (`identityProvider.url`) into the entry
 * (`url`). Throws when the table breaks that shape (an entry option outside the one group, a
 * field mixing entry and other options, an entry option with no field), so a table change that
 * would give a named provider different fields than the global one fails every test at once.
 */
function providerEntry(fields: readonly SpecField[]): { like: string; entry: SpecField[] } {
  const wanted = new Set(Object.values(ENTRY_KEYS));
  const covered = new Set<string>();
  const entry: SpecField[] = [];
  let like: string | undefined;
  for (const field of fields) {
    const keys = fieldOptions(field).map((option) => option.key);
    const inEntry = keys.filter((key) => wanted.has(key));
    if (inEntry.length === 0) continue;
    const [group, leaf, ...deeper] = field.path.split('.');
    if (inEntry.length !== keys.length || leaf === undefined || deeper.length > 0 || group === undefined)
      throw new Error(`${field.path} cannot be a field of a named identity provider`);
    if (like !== undefined && like !== group)
      throw new Error(`the named identity providers' fields span ${like} and ${group}`);
    like = group;
    entry.push({ ...field, path: leaf });
    for (const key of keys) covered.add(key);
  }
  const missing = [...wanted].filter((key) => !covered.has(key));
  if (like === undefined || missing.length > 0)
    throw new Error(`options of a named identity provider without a field: ${missing.join(', ')}`);
  return { like, entry };
}

/**
 * Where a provider entry's key (`client_id`) is in one entry of `field`: its field there
 * (`secret`) and, for a value read from a Secret, the data key; undefined for a key with no
 * field (`client_secret_file`).
 */
export function entryPlace(
  field: Extract<SpecField, { form: 'provider_map' }>,
  entryKey: string,
): { path: string; key?: string } | undefined {
  const optionKey = ENTRY_KEYS[entryKey];
  if (optionKey === undefined) return undefined;
  for (const inner of field.entry) {
    switch (inner.form) {
      case 'value':
        if (inner.option.key === optionKey) return { path: inner.path };
        break;
      case 'secret_key':
        if (inner.option.key === optionKey) return { path: inner.path, key: inner.key };
        break;
      case 'shared_secret': {
        const shared = inner.keys.find((candidate) => candidate.option.key === optionKey);
        if (shared !== undefined) return { path: inner.path, key: shared.key };
        break;
      }
      case 'secret_map': // its values' problems name the Secret through their origins
      case 'provider_map':
        break;
    }
  }
  return undefined;
}

/** The config keys a field gives values to. */
export function fieldOptions(field: SpecField): readonly OptionSpec[] {
  return field.form === 'shared_secret' ? field.keys.map((entry) => entry.option) : [field.option];
}

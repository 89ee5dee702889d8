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
  | { readonly form: 'secret_map'; readonly path: string; readonly option: OptionSpec };

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
  const placed: [OptionSpec, OrchestrationField][] = GLOBAL_OPTIONS.map((option) => [
    option,
    orchestrationField(option),
  ]);
  for (const [option, field] of placed) {
    if (field.form === 'value') fields.push({ form: 'value', path: field.path, option });
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
  return fields;
}

/** The config keys a field gives values to. */
export function fieldOptions(field: SpecField): readonly OptionSpec[] {
  return field.form === 'shared_secret' ? field.keys.map((entry) => entry.option) : [field.option];
}

/**
 * Option keys in text (docs, validate's messages) rewritten as the settings resource's field
 * names, so a Kubernetes user reads `identityProvider.url` where a file user reads
 * `idp_provider_url`. Only keys with an underscore are rewritten: single-word keys (`address`,
 * `routes`) are ordinary words in messages ("is not an address").
 */
import { orchestrationField } from '../config/orchestration-fields.js';
import { GLOBAL_OPTIONS, type OptionSpec } from '../config/option-table.js';

/**
 * The field an option is written as in text: `identityProvider.url`, or
 * `secrets (key shared_secret)` for a value read from a Secret; undefined when left out.
 */
export function fieldWords(option: OptionSpec): string | undefined {
  const field = orchestrationField(option);
  if (field.form === 'left_out') return undefined;
  return field.form === 'secret' ? `${field.path} (key ${field.key})` : field.path;
}

/**
 * `text` with each option key (or alias) that has an underscore and a field replaced by
 * `prefix` + its field words. Longest keys first, whole words only, so `cookie_secret_file`
 * is never read as `cookie_secret` followed by `_file`.
 */
export function renameOptionKeys(text: string, prefix: string): string {
  const names = new Map<string, string>();
  for (const option of GLOBAL_OPTIONS) {
    const words = fieldWords(option);
    if (words === undefined) continue;
    for (const key of [option.key, ...(option.aliases ?? [])]) {
      if (key.includes('_')) names.set(key, `${prefix}${words}`);
    }
  }
  if (names.size === 0) return text;
  const keys = [...names.keys()].sort((a, b) => b.length - a.length);
  const pattern = new RegExp(`(?<![A-Za-z0-9_.])(${keys.join('|')})(?![A-Za-z0-9_])`, 'g');
  return text.replace(pattern, (key) => names.get(key) ?? key);
}

/**
 * Where the environment overrides the settings object: an option set both by an environment
 * variable (`METRICS_ADDRESS`) and by its spec field, to different values. The environment wins
 * (as over a file), so the field is ignored; saying so keeps a pod's variables from silently
 * outliving an edit of the object. Pure; a secret option's value never appears, only the
 * Secret key it came from.
 */
import { envName, type OptionSpec } from '../config/option-table.js';
import { sameValue } from '../config/sources.js';
import { specFields } from './spec-fields.js';

/** One option the environment sets over the object's field. */
export interface EnvOverride {
  /** The config key (`metrics_address`). */
  readonly option: string;
  /** The environment variable that wins (`METRICS_ADDRESS`). */
  readonly envVar: string;
  /** The field it overrides (`spec.metricsAddress`). */
  readonly field: string;
  /** For a secret option: the key of the Secret the field names (its value is never shown). */
  readonly secretKey?: string;
}

/**
 * The overrides of `document` (the settings object read as a config document, settings-document.ts)
 * by `env`, one per option, in option-table order. A variable set to the field's value is not one.
 */
export function envOverrides(
  document: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>>,
): EnvOverride[] {
  const overrides: EnvOverride[] = [];
  for (const field of specFields()) {
    const entries: { option: OptionSpec; secretKey?: string }[] =
      field.form === 'value' || field.form === 'provider_map'
        ? [{ option: field.option }]
        : field.form === 'secret_key'
          ? [{ option: field.option, secretKey: field.key }]
          : field.form === 'shared_secret'
            ? field.keys.map((entry) => ({ option: entry.option, secretKey: entry.key }))
            : [{ option: field.option, secretKey: '(every entry)' }];
    for (const { option, secretKey } of entries) {
      const fromObject = document[option.key];
      if (fromObject === undefined) continue;
      const envVar = [option.key, ...(option.aliases ?? [])]
        .map(envName)
        .find((name) => env[name] !== undefined && env[name] !== '');
      if (envVar === undefined || sameValue(env[envVar], fromObject)) continue;
      overrides.push({
        option: option.key,
        envVar,
        field: `spec.${field.path}`,
        ...(secretKey === undefined ? {} : { secretKey }),
      });
    }
  }
  return overrides;
}

/** The warning for one override, naming the option, the variable and the field (never a value). */
export function overrideMessage(override: EnvOverride): string {
  const from =
    override.secretKey === undefined
      ? override.field
      : `${override.field} (Secret key ${override.secretKey})`;
  return `${override.option}: the environment variable ${override.envVar} overrides ${from}, which is ignored while the variable is set; unset one of them`;
}

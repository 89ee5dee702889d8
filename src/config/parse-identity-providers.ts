/**
 * `identity_providers`: named providers that routes choose with `identity_provider`. Each entry is
 * read under the global `idp_*` keys' own rows and checks (option-table-identity.ts,
 * checkProviderSettings, checkProviderSafety), so a named provider is refused exactly where the
 * global one would be, with messages naming `identity_providers.<name>.<key>`.
 */
import { checkProviderSafety } from './check-settings-safety.js';
import { DEFAULT_PROVIDER_NAME } from './identity-provider.js';
import { GLOBAL_OPTIONS } from './option-table.js';
import { checkProviderSettings } from './parse-identity.js';
import { ParsedValues } from './parsed-values.js';
import { readOption } from './read-option.js';
import { readFileOption, type RawValue, type ReadText } from './sources.js';
import type { IdpProvider, NamedIdentityProvider } from './types.js';
import { closestKey, describe, isPlainObject, type Reader } from './value-readers.js';
import type { Secret } from '../shared/secret.js';

/** A provider name: short, lower case, safe in logs, URLs and the reference. */
const PROVIDER_NAME = /^[a-z][a-z0-9_-]{0,62}$/;

/**
 * An entry's keys, each read as the global option it mirrors. Exported so the Kubernetes settings
 * resource gives each entry the fields of those options (kubernetes/spec-fields.ts).
 */
export const ENTRY_KEYS: Readonly<Record<string, string>> = {
  provider: 'idp_provider',
  provider_url: 'idp_provider_url',
  client_id: 'idp_client_id',
  client_secret: 'idp_client_secret',
  scopes: 'idp_scopes',
  request_params: 'idp_request_params',
  trust_unverified_email: 'idp_trust_unverified_email',
};
const SECRET_FILE_KEY = 'client_secret_file';
const KNOWN_KEYS = [...Object.keys(ENTRY_KEYS), SECRET_FILE_KEY];

/** What `identity_providers` gave. */
export interface NamedProviders {
  /** Each valid entry by name. */
  readonly providers: Record<string, NamedIdentityProvider>;
  /** Every name given, valid or not, so a route naming a refused entry gets no second problem. */
  readonly names: readonly string[];
}

/**
 * The named providers of `raw` (the `identity_providers` value: a map, or a JSON object in an
 * environment variable or properties file), each complete and checked; none when unset. Problems
 * are recorded on `reader`; an entry with one is left out (the parse then fails anyway).
 */
export function readIdentityProviders(
  reader: Reader,
  raw: RawValue | undefined,
  readText: ReadText,
): NamedProviders {
  const out: Record<string, NamedIdentityProvider> = {};
  if (raw === undefined) return { providers: out, names: [] };
  const map = fromJsonText(reader, raw.path, raw.value, 'a map of provider name to settings');
  if (map === undefined) return { providers: out, names: [] };
  if (!isPlainObject(map)) {
    reader.problem(raw.path, `expected a map of provider name to settings, got ${describe(map)}`);
    return { providers: out, names: [] };
  }
  for (const [name, value] of Object.entries(map)) {
    const path = `${raw.path}.${name}`;
    if (name === DEFAULT_PROVIDER_NAME) {
      reader.problem(
        path,
        `is reserved for the provider of the global idp_* keys; give this provider another name, or set it with idp_provider, idp_provider_url, idp_client_id, ...`,
      );
      continue;
    }
    if (!PROVIDER_NAME.test(name)) {
      reader.problem(
        path,
        `"${name}" is not a provider name: use a lower-case letter, then up to 62 lower-case letters, digits, "-" or "_"`,
      );
      continue;
    }
    const entry = readEntry(reader, path, value, readText);
    if (entry !== undefined) out[name] = entry;
  }
  return { providers: out, names: Object.keys(map) };
}

/** One provider's settings, or undefined (with problems). */
function readEntry(
  reader: Reader,
  path: string,
  value: unknown,
  readText: ReadText,
): NamedIdentityProvider | undefined {
  const entry = fromJsonText(reader, path, value, "the provider's settings");
  if (entry === undefined) return undefined;
  if (!isPlainObject(entry))
    return reader.problem(path, `expected a map of the provider's settings, got ${describe(entry)}`);
  const before = reader.problems.length;
  for (const key of Object.keys(entry).filter((key) => !KNOWN_KEYS.includes(key))) {
    const hint = closestKey(key, KNOWN_KEYS);
    reader.problem(
      `${path}.${key}`,
      `unknown key${hint === undefined ? '' : ` (did you mean ${hint}?)`}; a provider has ${KNOWN_KEYS.join(', ')}`,
    );
  }
  const values = readValues(reader, path, entry, readText);
  const settings = checkProviderSettings(reader, values);
  checkProviderSafety(reader, values);
  // One problem per missing key, at its path, so a caller that already reported why a value is
  // missing (the Kubernetes settings resource: a Secret not found) can drop the repeat.
  const complete = 'a named provider is complete on its own';
  if (entry.provider === undefined && entry.provider_url === undefined)
    reader.problem(`${path}.provider_url`, `is required (or provider): ${complete}`);
  if (entry.client_id === undefined) reader.problem(`${path}.client_id`, `is required: ${complete}`);
  if (entry.client_secret === undefined && entry[SECRET_FILE_KEY] === undefined)
    reader.problem(`${path}.client_secret`, `is required (or ${SECRET_FILE_KEY}): ${complete}`);
  const provider = settings.idp_provider;
  const clientId = values.get<string>('idp_client_id');
  const clientSecret = values.get<Secret<string>>('idp_client_secret');
  if (reader.problems.length > before || provider === undefined) return undefined;
  if (clientId === undefined || clientSecret === undefined) return undefined;
  const scopes = values.get<string[]>('idp_scopes');
  return {
    provider: provider satisfies IdpProvider,
    ...(settings.idp_provider_url === undefined ? {} : { provider_url: settings.idp_provider_url }),
    client_id: clientId,
    client_secret: clientSecret,
    ...(scopes === undefined ? {} : { scopes }),
    request_params: values.get<Record<string, string>>('idp_request_params') ?? {},
    trust_unverified_email: values.get<boolean>('idp_trust_unverified_email') ?? false,
  };
}

/**
 * The entry's values read by the global rows they mirror, under paths naming the entry's keys;
 * `client_secret_file` is read into `client_secret` (setting both is an error).
 */
function readValues(
  reader: Reader,
  path: string,
  entry: Record<string, unknown>,
  readText: ReadText,
): ParsedValues {
  const raws = new Map<string, RawValue>();
  for (const [key, option] of Object.entries(ENTRY_KEYS)) {
    if (entry[key] !== undefined)
      raws.set(option, { value: entry[key], path: `${path}.${key}`, source: 'file', syntax: 'typed' });
  }
  const file = entry[SECRET_FILE_KEY];
  if (file !== undefined) {
    const filePath = `${path}.${SECRET_FILE_KEY}`;
    const fileRaw: RawValue = { value: file, path: filePath, source: 'file', syntax: 'text' };
    if (entry.client_secret !== undefined) {
      reader.problem(filePath, `set only one of ${path}.client_secret and ${filePath}`);
      raws.set('idp_client_secret', { ...fileRaw, failed: true });
    } else {
      const text = readFileOption(reader, fileRaw, readText);
      raws.set('idp_client_secret', {
        ...fileRaw,
        value: text,
        ...(text === undefined ? { failed: true } : {}),
      });
    }
  }
  const entryKey = (option: string): string =>
    `${path}.${Object.keys(ENTRY_KEYS).find((key) => ENTRY_KEYS[key] === option) ?? option}`;
  const values = new ParsedValues(raws, entryKey);
  for (const [option, raw] of raws) {
    const spec = GLOBAL_OPTIONS.find((row) => row.key === option);
    if (spec !== undefined && raw.failed !== true)
      values.set(option, readOption(reader, spec, raw, readText));
  }
  return values;
}

/** `value`, or the JSON object it holds when it is text (an environment variable, a properties file). */
function fromJsonText(reader: Reader, path: string, value: unknown, what: string): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return reader.problem(path, `expected ${what}; as text, write it as a JSON object`);
  }
}

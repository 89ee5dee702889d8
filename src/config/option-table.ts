/**
 * The one option table: every global setting's file key, environment variable, type, default,
 * the services that use it, whether it is secret, and a one-line doc. Parsing, env binding,
 * defaults, validation and docs/reference.md all come from here, so they cannot drift apart.
 * The rows live in option-table-*.ts by group; removed and renamed options are in
 * removed-options.ts and route keys in route-option-table.ts.
 */
import { IDENTITY_OPTIONS } from './option-table-identity.js';
import { SERVER_OPTIONS } from './option-table-server.js';
import type { ServiceName } from './types.js';

export type { ServiceName };

/** How an option's raw value is read and validated. */
export type OptionKind =
  | { readonly type: 'string'; readonly pattern?: RegExp; readonly hint?: string }
  | { readonly type: 'url_path' }
  | { readonly type: 'url'; readonly https: 'required' | 'optional' }
  | { readonly type: 'address' }
  | { readonly type: 'bool' }
  | { readonly type: 'int'; readonly min: number; readonly max: number }
  | { readonly type: 'number'; readonly min: number; readonly max: number }
  | { readonly type: 'duration' }
  | {
      readonly type: 'enum';
      readonly values: readonly string[];
      readonly aliases?: Readonly<Record<string, string>>;
    }
  | { readonly type: 'enum_list'; readonly values: readonly string[] }
  | {
      readonly type: 'string_list';
      /** Each item must match; the hint says what is expected. */
      readonly item?: { readonly pattern: RegExp; readonly hint: string };
      readonly nonEmpty?: boolean;
    }
  | { readonly type: 'string_map' }
  | { readonly type: 'claims_headers' }
  | { readonly type: 'secret_bytes32' }
  | { readonly type: 'secret_string' }
  | { readonly type: 'signing_key' }
  | { readonly type: 'pem'; readonly what: 'certificate' | 'private key' }
  /** A path whose trimmed content is the value of option `of`; setting both is an error. */
  | { readonly type: 'file'; readonly of: string }
  /** A path of a PEM file that adds to the certificate list (not exclusive with the inline form). */
  | { readonly type: 'pem_file'; readonly what: 'certificate' | 'private key' }
  | { readonly type: 'certificates' }
  | { readonly type: 'routes' };

/** Sections of docs/reference.md. */
export type OptionGroup =
  | 'Services'
  | 'Secrets'
  | 'Identity provider'
  | 'Cookies'
  | 'Identity headers'
  | 'Listeners and TLS'
  | 'Timeouts'
  | 'Observability'
  | 'Databroker'
  | 'Routes';

/** One row of the option table. */
export interface OptionSpec {
  /** Config-file key (lower case); the environment variable is its upper-cased form. */
  readonly key: string;
  readonly group: OptionGroup;
  readonly kind: OptionKind;
  /** Default as a string in the option's own syntax, or undefined for "unset". */
  readonly default?: string;
  readonly services: readonly ServiceName[];
  readonly secret: boolean;
  /** Other spellings accepted for the same option (file keys; env names are their upper case). */
  readonly aliases?: readonly string[];
  /** Set when the key still works but is deprecated: the key to use instead. */
  readonly deprecatedFor?: string;
  readonly doc: string;
}

/** Every global option this version understands. */
export const GLOBAL_OPTIONS: readonly OptionSpec[] = [...IDENTITY_OPTIONS, ...SERVER_OPTIONS];

/** Environment variable name for an option key. */
export function envName(key: string): string {
  return key.toUpperCase();
}

/** Looks an option up by key or alias. */
export function findOption(key: string): OptionSpec | undefined {
  return GLOBAL_OPTIONS.find((option) => option.key === key || (option.aliases ?? []).includes(key));
}

/** Every key (and alias) a config file may use at the top level. */
export const KNOWN_GLOBAL_KEYS: readonly string[] = GLOBAL_OPTIONS.flatMap((option) => [
  option.key,
  ...(option.aliases ?? []),
]);

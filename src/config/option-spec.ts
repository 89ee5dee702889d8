/**
 * The shape of one row of the option table (option-table.ts): its kind, group, services and
 * support status. A file of its own so the row files (option-table-*.ts) and the table share it
 * without importing each other.
 */
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
      /**
       * Values users may expect that are refused with their own message (what to do instead)
       * rather than the generic "is not one of": `idp_provider: hosted`. Lower case.
       */
      readonly refused?: Readonly<Record<string, string>>;
    }
  | { readonly type: 'enum_list'; readonly values: readonly string[] }
  | {
      readonly type: 'string_list';
      /** Each item must pass `valid`; the hint says what is expected. */
      readonly item?: { readonly valid: (item: string) => boolean; readonly hint: string };
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
  /** Named identity providers (parse-identity-providers.ts reads them). */
  | { readonly type: 'identity_providers' }
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

/** The numbers of the issues that build what a not-yet-supported option asks for (shown to users). */
export type SupportIssue = 24 | 25 | 26 | 27 | 28;

/**
 * Marks an option that is parsed and validated but has no effect yet, so that setting it is
 * reported instead of silently ignored (see unsupported-options.ts). The issue that builds the
 * option removes its mark. Leaving an option unset, or at its default, is never reported.
 */
export interface NotYetSupported {
  readonly status: 'not-yet';
  readonly issue: SupportIssue;
  /**
   * `error` where ignoring the option would weaken security or lose data (`validate` fails and
   * start-up refuses); `warning` otherwise (reported by `validate` and logged at start-up).
   */
  readonly severity: 'warning' | 'error';
  /** What happens today instead, ending the message: `nothing listens on it`. */
  readonly effect: string;
  /** For the docs, when only some values are unsupported: `` `redis` ``, `anything but all`. */
  readonly which?: string;
  /** Values that already work besides the default (`services: all,proxy` is still all-in-one). */
  readonly works?: (value: unknown) => boolean;
  /** Set when translate already refuses the option with its own problem: parsing stays quiet. */
  readonly refusedBy?: 'translate';
}

/**
 * Where an option's value comes from in a Kubernetes Secret instead of the Portcullis object:
 * `secret` is the field (dotted, under `spec`) that names the Secret, `key` the Secret's data key
 * holding the value. Several options may share one Secret (`secrets`: shared_secret, ...).
 */
export interface SecretField {
  readonly secret: string;
  readonly key: string;
}

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
  /**
   * Its field in the Kubernetes settings resource (under `spec`, dotted) when that is not the
   * camelCase of the key: grouped names (`identityProvider.url`) or a Secret it comes from. See
   * config/orchestration-fields.ts for the rule and the options left out.
   */
  readonly field?: string | SecretField;
  /** Set while the option has no effect yet; see NotYetSupported. */
  readonly support?: NotYetSupported;
}

/**
 * The one option table: every global setting's file key, environment variable, type, default,
 * the services that use it, whether it is secret, and a one-line doc. Parsing, env binding,
 * defaults, validation and docs/reference.md all come from here, so they cannot drift apart.
 * The rows live in option-table-*.ts by group; removed and renamed options are in
 * removed-options.ts and route keys in route-option-table.ts.
 */
import { IDENTITY_OPTIONS } from './option-table-identity.js';
import { SERVER_OPTIONS } from './option-table-server.js';
import type { OptionSpec } from './option-spec.js';

export type * from './option-spec.js';

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

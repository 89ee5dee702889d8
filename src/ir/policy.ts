/**
 * The IR's policy language: the validated rules of a route (its access shortcuts and `policy`
 * rules, assembled by translate) in the form the authorize stage compiles and evaluates. The IR
 * owns these types so that authorize never sees config types; their shapes are those of the
 * config's policy grammar (config/policy-types.ts), which translate copies in.
 */

/** A scalar a matcher compares with (claims may be numbers or booleans, e.g. `email_verified`). */
export type PolicyValue = string | number | boolean;

/** A string matcher; its operators are AND-ed when several are given. */
export interface StringMatcher {
  readonly is?: PolicyValue;
  readonly not?: PolicyValue;
  readonly contains?: string;
  readonly starts_with?: string;
  readonly ends_with?: string;
  readonly in?: readonly PolicyValue[];
  readonly not_in?: readonly PolicyValue[];
}

/**
 * A list matcher over the values of a multi-valued claim: `has` (some element matches), `is`
 * (exactly one element and it matches), `exclude` (no element matches).
 */
export interface ListMatcher {
  readonly has?: StringMatcher;
  readonly is?: StringMatcher;
  readonly exclude?: StringMatcher;
}

/** Criteria that take no data. */
export type FlagCriterionKind =
  | 'accept'
  | 'reject'
  | 'authenticated_user'
  | 'cors_preflight'
  | 'invalid_client_certificate';

/** Criteria whose data is a string matcher. */
export type StringCriterionKind = 'email' | 'domain' | 'user' | 'http_method' | 'http_path';

/** One criterion, with the config key path it came from (for messages and decisions' reasons). */
export type Criterion = { readonly path: string } & (
  | { readonly kind: FlagCriterionKind }
  | { readonly kind: StringCriterionKind; readonly matcher: StringMatcher }
  | { readonly kind: 'claim'; readonly claim: string; readonly matcher: ListMatcher }
  | { readonly kind: 'source_ip'; readonly cidrs: readonly string[] }
  | {
      readonly kind: 'client_certificate';
      readonly fingerprint?: readonly string[];
      readonly spki_hash?: readonly string[];
      readonly san_email?: StringMatcher;
      readonly san_dns?: StringMatcher;
      readonly san_uri?: StringMatcher;
    }
  | {
      readonly kind: 'device';
      readonly is?: readonly string[];
      readonly approved?: boolean;
      readonly type?: string;
    }
);

/**
 * One rule. Semantics (for the evaluator): `and` all true, `or` any true, `not` all false, `nor`
 * at least one false; the non-empty blocks of one rule are OR-ed, and so are rules with the same
 * action. Deny beats allow.
 */
export interface PolicyRule {
  readonly action: 'allow' | 'deny';
  readonly and: readonly Criterion[];
  readonly or: readonly Criterion[];
  readonly not: readonly Criterion[];
  readonly nor: readonly Criterion[];
  /** Key path of the rule (`routes[3].policy[0]`). */
  readonly path: string;
}

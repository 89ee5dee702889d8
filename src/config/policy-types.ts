/**
 * The route policy language, typed and validated: what `routes[i].policy` parses into. The grammar
 * follows the peer's PPL (pomerium-behaviour.md section 2) so existing policies move unchanged:
 * a policy is a list of rules; a rule has an action (allow or deny) and operator blocks (and, or,
 * not, nor), each holding criteria. Evaluation belongs to the authorize stage; this module only
 * describes the validated shape it compiles.
 */

/** A scalar a matcher compares with (claims may be numbers or booleans, e.g. `email_verified`). */
export type PolicyValue = string | number | boolean;

/** The string matcher operators, AND-ed when several are given. */
export const STRING_MATCHER_OPERATORS = [
  'is',
  'not',
  'contains',
  'starts_with',
  'ends_with',
  'in',
  'not_in',
] as const;

/** The list matcher operators for multi-valued data (claims). */
export const LIST_MATCHER_OPERATORS = ['has', 'is', 'exclude'] as const;

/** A string matcher: a bare value in the config means `{ is: value }`. */
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
 * (exactly one element and it matches), `exclude` (no element matches). A bare value means
 * `{ has: { is: value } }`.
 */
export interface ListMatcher {
  readonly has?: StringMatcher;
  readonly is?: StringMatcher;
  readonly exclude?: StringMatcher;
}

/** Criteria that take no data (the value written in the config is ignored). */
export const FLAG_CRITERIA = [
  'accept',
  'reject',
  'authenticated_user',
  'cors_preflight',
  'invalid_client_certificate',
] as const;

/** Criteria whose data is a string matcher. */
export const STRING_CRITERIA = ['email', 'domain', 'user', 'http_method', 'http_path'] as const;

/** Every criterion name the policy language knows (`claim` takes a `/name` suffix). */
export const CRITERIA = [
  ...FLAG_CRITERIA,
  ...STRING_CRITERIA,
  'claim',
  'source_ip',
  'client_certificate',
  'device',
] as const;

/** One validated criterion, with the key path it came from for later messages. */
export type Criterion = { readonly path: string } & (
  | { readonly kind: (typeof FLAG_CRITERIA)[number] }
  | { readonly kind: (typeof STRING_CRITERIA)[number]; readonly matcher: StringMatcher }
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

/** The operator blocks of a rule. */
export const POLICY_OPERATORS = ['and', 'or', 'not', 'nor'] as const;
export type PolicyOperator = (typeof POLICY_OPERATORS)[number];

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

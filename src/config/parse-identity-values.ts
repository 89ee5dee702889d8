/**
 * Addresses, domains and user ids written in policies, validated and stored in the canonical form
 * the evaluator compares (shared/email-address.ts): `allowed_users`, `allowed_domains`, and the
 * operands of the `email`, `domain` and `user` criteria in allow and deny rules alike. A value that
 * could never match an address (two `@`, an IP for a domain, a wildcard) is an error naming its key
 * rather than a rule that silently never applies: for a deny, that would be a hole.
 */
import { canonicalDomain, canonicalEmail, canonicalUserId } from '../shared/email-address.js';
import type { PolicyValue, StringMatcher } from './policy-types.js';
import type { Reader } from './value-readers.js';

const ADDRESS_HINT =
  'exactly one @, a local part such as eve.smith (no spaces or quotes) and a domain name such as example.com';
const DOMAIN_HINT = 'a domain name such as example.com (no @, wildcard, IP address, scheme or port)';

/**
 * `allowed_users`: each entry is a user id (compared exactly) or, when it has an `@`, an address,
 * which must parse and is stored canonical (it is matched against both the id and the address).
 */
export function canonicalAllowedUsers(reader: Reader, path: string, users: readonly string[]): string[] {
  return users.flatMap((user, index) => {
    const value = user.trim();
    if (value === '')
      return reader.problem(`${path}[${index}]`, 'is empty; give a user id or an e-mail address') ?? [];
    if (!value.includes('@')) return [value];
    const address = canonicalEmail(value);
    if (address !== undefined) return [address];
    reader.problem(
      `${path}[${index}]`,
      `"${user}" is not an e-mail address (${ADDRESS_HINT}); give a valid address or a user id without @`,
    );
    return [];
  });
}

/** `allowed_domains`: each entry a domain name, stored canonical (lower case, ASCII, no trailing dot). */
export function canonicalAllowedDomains(reader: Reader, path: string, domains: readonly string[]): string[] {
  return domains.flatMap((domain, index) => {
    const value = canonicalDomain(domain.trim());
    if (value !== undefined) return [value];
    reader.problem(`${path}[${index}]`, `"${domain}" is not a domain (${DOMAIN_HINT})`);
    return [];
  });
}

/**
 * The matcher of an `email`, `domain` or `user` criterion with its operands canonical. Exact
 * operands (is, not, in, not_in) of `email` must be addresses and those of `domain` domain names;
 * their fragments (contains, starts_with, ends_with) are lower-cased, as the compared address is.
 * `user` operands that are addresses are made canonical, other ids and fragments are kept as
 * written (ids are opaque). `bare` says the matcher was written as a bare value, whose problems
 * belong to `path` itself rather than to `path.is`. Undefined (with problems) when any is invalid.
 */
export function canonicalIdentityMatcher(
  reader: Reader,
  path: string,
  bare: boolean,
  kind: 'email' | 'domain' | 'user',
  matcher: StringMatcher,
): StringMatcher | undefined {
  const before = reader.problems.length;
  const exact = (value: PolicyValue, at: string): string => {
    const text = String(value).trim();
    if (kind === 'user') return canonicalUserId(text);
    const canonical = kind === 'email' ? canonicalEmail(text) : canonicalDomain(text);
    if (canonical !== undefined) return canonical;
    reader.problem(
      at,
      kind === 'email'
        ? `"${String(value)}" is not an e-mail address (${ADDRESS_HINT})`
        : `"${String(value)}" is not a domain (${DOMAIN_HINT})`,
    );
    return text;
  };
  const fragment = (text: string): string => (kind === 'user' ? text : text.toLowerCase());
  const at = (operator: string): string => (bare ? path : `${path}.${operator}`);
  const out: StringMatcher = {
    ...(matcher.is === undefined ? {} : { is: exact(matcher.is, at('is')) }),
    ...(matcher.not === undefined ? {} : { not: exact(matcher.not, at('not')) }),
    ...(matcher.in === undefined ? {} : { in: matcher.in.map((v, i) => exact(v, `${at('in')}[${i}]`)) }),
    ...(matcher.not_in === undefined
      ? {}
      : { not_in: matcher.not_in.map((v, i) => exact(v, `${at('not_in')}[${i}]`)) }),
    ...(matcher.contains === undefined ? {} : { contains: fragment(matcher.contains) }),
    ...(matcher.starts_with === undefined ? {} : { starts_with: fragment(matcher.starts_with) }),
    ...(matcher.ends_with === undefined ? {} : { ends_with: fragment(matcher.ends_with) }),
  };
  return reader.problems.length === before ? out : undefined;
}

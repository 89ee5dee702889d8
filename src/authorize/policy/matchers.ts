import type { ListMatcher, PolicyValue, StringMatcher } from '../../ir/policy.js';

/** A compiled string test: true when `value` satisfies every operator of the matcher. */
export type StringTest = (value: string | undefined) => boolean;

/** A compiled list test over a multi-valued claim. */
export type ListTest = (values: readonly string[]) => boolean;

const text = (value: PolicyValue): string => String(value);

/**
 * Compiles a string matcher once per config version. Operators given together are AND-ed;
 * comparisons are exact and case-sensitive (the peer's semantics). A missing value never matches.
 */
export function compileStringMatcher(matcher: StringMatcher): StringTest {
  const tests: ((value: string) => boolean)[] = [];
  if (matcher.is !== undefined) {
    const expected = text(matcher.is);
    tests.push((value) => value === expected);
  }
  if (matcher.not !== undefined) {
    const unexpected = text(matcher.not);
    tests.push((value) => value !== unexpected);
  }
  if (matcher.contains !== undefined) {
    const part = matcher.contains;
    tests.push((value) => value.includes(part));
  }
  if (matcher.starts_with !== undefined) {
    const prefix = matcher.starts_with;
    tests.push((value) => value.startsWith(prefix));
  }
  if (matcher.ends_with !== undefined) {
    const suffix = matcher.ends_with;
    tests.push((value) => value.endsWith(suffix));
  }
  if (matcher.in !== undefined) {
    const allowed = new Set(matcher.in.map(text));
    tests.push((value) => allowed.has(value));
  }
  if (matcher.not_in !== undefined) {
    const refused = new Set(matcher.not_in.map(text));
    tests.push((value) => !refused.has(value));
  }
  if (tests.length === 1) {
    const only = tests[0] as (value: string) => boolean;
    return (value) => value !== undefined && only(value);
  }
  return (value) => value !== undefined && tests.length > 0 && tests.every((test) => test(value));
}

/**
 * Compiles a list matcher: `has` (some element matches), `is` (exactly one element, and it
 * matches), `exclude` (no element matches); several operators are AND-ed.
 */
export function compileListMatcher(matcher: ListMatcher): ListTest {
  const tests: ListTest[] = [];
  if (matcher.has !== undefined) {
    const element = compileStringMatcher(matcher.has);
    tests.push((values) => values.some(element));
  }
  if (matcher.is !== undefined) {
    const element = compileStringMatcher(matcher.is);
    tests.push((values) => values.length === 1 && element(values[0]));
  }
  if (matcher.exclude !== undefined) {
    const element = compileStringMatcher(matcher.exclude);
    tests.push((values) => !values.some(element));
  }
  return (values) => tests.length > 0 && tests.every((test) => test(values));
}

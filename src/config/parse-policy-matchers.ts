import { isIP } from 'node:net';
import {
  LIST_MATCHER_OPERATORS,
  STRING_MATCHER_OPERATORS,
  type ListMatcher,
  type PolicyValue,
  type StringMatcher,
} from './policy-types.js';
import { closestKey, describe, isPlainObject, type Reader } from './value-readers.js';

/** Whether a matcher compares strings only, or any scalar (claims can be numbers and booleans). */
export type ValueKind = 'string' | 'scalar';

function scalar(reader: Reader, path: string, raw: unknown, kind: ValueKind): PolicyValue | undefined {
  if (typeof raw === 'string') return raw;
  if (kind === 'scalar' && (typeof raw === 'number' || typeof raw === 'boolean')) return raw;
  return reader.problem(
    path,
    `expected ${kind === 'string' ? 'a string' : 'a string, number or boolean'}, got ${describe(raw)}`,
  );
}

/**
 * A string matcher: a bare value means `is`; a map combines operators (is, not, contains,
 * starts_with, ends_with, in, not_in), all of which must hold. Unknown operators are errors at
 * their path with a did-you-mean hint.
 */
export function parseStringMatcher(
  reader: Reader,
  path: string,
  raw: unknown,
  kind: ValueKind,
): StringMatcher | undefined {
  if (!isPlainObject(raw)) {
    if (Array.isArray(raw)) {
      return reader.problem(
        path,
        'expected a value or a map of operators; for several values write {in: [...]}',
      );
    }
    const value = scalar(reader, path, raw, kind);
    return value === undefined ? undefined : { is: value };
  }
  if (Object.keys(raw).length === 0) {
    return reader.problem(path, `needs an operator: one of ${STRING_MATCHER_OPERATORS.join(', ')}`);
  }
  const before = reader.problems.length;
  const out: Record<string, unknown> = {};
  for (const [operator, value] of Object.entries(raw)) {
    const at = `${path}.${operator}`;
    if (operator === 'is' || operator === 'not') {
      out[operator] = scalar(reader, at, value, kind);
    } else if (operator === 'contains' || operator === 'starts_with' || operator === 'ends_with') {
      out[operator] = scalar(reader, at, value, 'string');
    } else if (operator === 'in' || operator === 'not_in') {
      if (!Array.isArray(value)) {
        reader.problem(at, `${operator} matcher requires an array of strings`);
      } else {
        out[operator] = value.map((item, index) => scalar(reader, `${at}[${index}]`, item, kind));
      }
    } else {
      const hint = closestKey(operator, STRING_MATCHER_OPERATORS);
      reader.problem(
        at,
        `unknown string matcher operator: ${operator}${hint === undefined ? '' : ` (did you mean ${hint}?)`}`,
      );
    }
  }
  return reader.problems.length === before ? (out as StringMatcher) : undefined;
}

/**
 * A list matcher for multi-valued claims: a bare value means `has` that value; a map takes
 * has (some element matches), is (exactly one element, and it matches), exclude (no element
 * matches), each holding a string matcher.
 */
export function parseListMatcher(reader: Reader, path: string, raw: unknown): ListMatcher | undefined {
  if (!isPlainObject(raw)) {
    if (Array.isArray(raw)) {
      return reader.problem(
        path,
        'expected a value or a map of operators; for several values write {has: {in: [...]}}',
      );
    }
    const value = scalar(reader, path, raw, 'scalar');
    return value === undefined ? undefined : { has: { is: value } };
  }
  if (Object.keys(raw).length === 0) {
    return reader.problem(path, `needs an operator: one of ${LIST_MATCHER_OPERATORS.join(', ')}`);
  }
  const before = reader.problems.length;
  const out: Record<string, StringMatcher | undefined> = {};
  for (const [operator, value] of Object.entries(raw)) {
    const at = `${path}.${operator}`;
    if ((LIST_MATCHER_OPERATORS as readonly string[]).includes(operator)) {
      out[operator] = parseStringMatcher(reader, at, value, 'scalar');
    } else if ((STRING_MATCHER_OPERATORS as readonly string[]).includes(operator)) {
      reader.problem(
        at,
        `unknown list matcher operator: ${operator} (claims are lists: write {has: {${operator}: ...}})`,
      );
    } else {
      const hint = closestKey(operator, LIST_MATCHER_OPERATORS);
      reader.problem(
        at,
        `unknown list matcher operator: ${operator}${hint === undefined ? '' : ` (did you mean ${hint}?)`}`,
      );
    }
  }
  return reader.problems.length === before ? (out as ListMatcher) : undefined;
}

/** `source_ip`: one IP or CIDR, or a list of them. */
export function parseSourceIp(reader: Reader, path: string, raw: unknown): string[] | undefined {
  const items = Array.isArray(raw) ? raw : [raw];
  const before = reader.problems.length;
  const out: string[] = [];
  items.forEach((item, index) => {
    const at = Array.isArray(raw) ? `${path}[${index}]` : path;
    if (typeof item !== 'string') {
      reader.problem(at, `expected an IP address or CIDR, got ${describe(item)}`);
      return;
    }
    const [address = '', prefix, extra] = item.trim().split('/');
    const version = isIP(address);
    const bits = prefix === undefined ? 0 : /^\d{1,3}$/.test(prefix) ? Number(prefix) : -1;
    if (version === 0 || extra !== undefined || bits < 0 || bits > (version === 4 ? 32 : 128)) {
      reader.problem(at, `"${item}" is not an IP address or CIDR (such as 10.0.0.0/8 or 2001:db8::/32)`);
    } else {
      out.push(item.trim());
    }
  });
  return reader.problems.length === before ? out : undefined;
}

/** A string or list of strings, each checked by `valid` (which returns the normalised form or undefined). */
export function parseStringOrList(
  reader: Reader,
  path: string,
  raw: unknown,
  what: string,
  valid: (text: string) => string | undefined,
): string[] | undefined {
  const items = Array.isArray(raw) ? raw : [raw];
  const before = reader.problems.length;
  const out: string[] = [];
  items.forEach((item, index) => {
    const at = Array.isArray(raw) ? `${path}[${index}]` : path;
    const normalised = typeof item === 'string' ? valid(item.trim()) : undefined;
    if (normalised === undefined) reader.problem(at, `expected ${what}, got ${describe(item)}`);
    else out.push(normalised);
  });
  return reader.problems.length === before ? out : undefined;
}

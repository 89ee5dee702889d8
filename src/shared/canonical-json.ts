import { setOwn } from './own-property.js';

/**
 * Canonical JSON: object keys sorted, no whitespace, `undefined` members dropped. Two values that
 * are structurally equal always serialize to the same string, which is what content hashes and
 * golden files need.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

/** Returns a deep copy of `value` whose object keys are in sorted order (arrays keep their order). */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const member = (value as Record<string, unknown>)[key];
      if (member === undefined) continue;
      // A `__proto__` key is kept (a plain assignment would set the prototype and drop it); the
      // check keeps the plain assignment, which is faster, for every other key.
      if (key === '__proto__') setOwn(out, key, sortKeys(member));
      else out[key] = sortKeys(member);
    }
    return out;
  }
  return value;
}

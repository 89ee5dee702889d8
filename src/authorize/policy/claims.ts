/**
 * Reads a claim by name for `claim/<name>` criteria: the exact key first, then a nested path split
 * on `.` or `/` (`realm_access.roles`), at most five levels deep. The result is a list of strings:
 * arrays give their elements, scalars a single element, objects and missing claims nothing.
 */
export function claimValues(claims: Readonly<Record<string, unknown>>, name: string): readonly string[] {
  let value: unknown = claims[name];
  if (value === undefined) value = nested(claims, name.split(/[./]/));
  return toStrings(value);
}

function nested(root: unknown, parts: readonly string[]): unknown {
  if (parts.length > 5) return undefined;
  let current = root;
  for (const part of parts) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

function toStrings(value: unknown): readonly string[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) {
    return value.filter((item) => item !== null && typeof item !== 'object').map((item) => String(item));
  }
  return typeof value === 'object' ? [] : [String(value)];
}

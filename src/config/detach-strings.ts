/**
 * Replaces, in place, every string of at least 13 characters in a parsed document by a copy that
 * stands alone, and returns the document.
 *
 * Why: js-yaml parses a private copy of the text (it appends a terminator), and V8 represents a
 * long scalar cut from it as a slice that keeps that whole copy alive. The splice base already
 * keeps the text itself, so without this a 10,000-route config was held twice (~4 MB each).
 * Shorter strings are copies already (V8 slices only from 13 characters on).
 */
export function detachStrings<T>(document: T): T {
  return detach(document) as T;
}

const SLICE_MIN_LENGTH = 13;

function detach(value: unknown): unknown {
  if (typeof value === 'string') return value.length < SLICE_MIN_LENGTH ? value : standalone(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = detach(value[i]);
  } else if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) record[key] = detach(record[key]);
  }
  return value;
}

/** A flat copy of `text`: a two-part concatenation, flattened at once by reading a character. */
function standalone(text: string): string {
  const copy = text.slice(0, 1) + text.slice(1);
  copy.charCodeAt(0);
  return copy;
}

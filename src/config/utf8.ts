import { isUtf8 } from 'node:buffer';

/** Strictly decoded text, or where the first invalid byte sequence is (1-based line). */
export type StrictText = string | { readonly invalidUtf8Line: number };

/**
 * Decodes `bytes` as UTF-8, refusing invalid sequences instead of replacing them with U+FFFD as
 * `Buffer.toString` does: a replaced character can make a deny entry or a header value silently
 * unmatchable, so a config with one is an error that names the line. A leading BOM is dropped.
 */
export function decodeUtf8Strictly(bytes: Buffer): StrictText {
  if (isUtf8(bytes)) return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  let line = 1;
  let start = 0;
  for (;;) {
    const end = bytes.indexOf(0x0a, start);
    const slice = bytes.subarray(start, end === -1 ? bytes.length : end);
    if (!isUtf8(slice) || end === -1) return { invalidUtf8Line: line };
    line += 1;
    start = end + 1;
  }
}

/** The problem text for text that is not UTF-8. */
export function invalidUtf8Message(what: string, line: number): string {
  return `${what} is not valid UTF-8 (line ${line}); save it as UTF-8: invalid bytes would be replaced and could make a value, such as a deny entry, never match`;
}

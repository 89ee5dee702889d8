/**
 * Templates in header values: `${portcullis.access_token}`, `${portcullis.id_token}` and
 * `${portcullis.claims.<claim>}` name what Portcullis fills in per request from the user's session
 * (set_request_headers only). `$${` is a literal `${`. Any other `${` is an error at its key, never
 * literal text an upstream would receive (a misspelled template would otherwise send
 * `Bearer ${portcullis.acess_token}` upstream). Config text, not network input: a regular
 * expression over the value is enough.
 */
import type { Reader } from './value-readers.js';

/** One piece of a header value: literal text, or what Portcullis fills in per request. */
export type HeaderTemplatePart =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'access_token' }
  | { readonly kind: 'id_token' }
  | { readonly kind: 'claim'; readonly claim: string };

/** The template names, as the error messages list them. */
export const TEMPLATE_NAMES: readonly string[] = [
  '${portcullis.access_token}',
  '${portcullis.id_token}',
  '${portcullis.claims.<claim name>}',
];

/** `$${` (an escaped, literal `${`), a closed `${...}`, or an unclosed `${`. */
const MARKER = /\$\$\{|\$\{([^}]*)\}|\$\{/g;
/** A claim name: no spaces, braces or `$` (a nested path uses `.` or `/`, as `claim/<name>` does). */
const CLAIM_NAME = /^[^\s{}$]+$/;

/** A parsed header value: its parts, or why it is not a valid template. */
export type ParsedHeaderValue =
  | { readonly parts: readonly HeaderTemplatePart[]; readonly error?: undefined }
  | { readonly error: string };

/**
 * Splits `value` into literal text and templates (adjacent text merged, `$${` unescaped to `${`).
 * A value without any template is one text part (or none when empty).
 */
export function parseHeaderValue(value: string): ParsedHeaderValue {
  const parts: HeaderTemplatePart[] = [];
  let text = '';
  let last = 0;
  for (const match of value.matchAll(MARKER)) {
    text += value.slice(last, match.index);
    last = match.index + match[0].length;
    if (match[0] === '$${') {
      text += '${';
      continue;
    }
    const inner = match[1];
    if (inner === undefined)
      return { error: `has an unclosed \`\${\` (write \`$\${\` for a literal \`\${\`)` };
    const part = templatePart(inner);
    if (part === undefined)
      return {
        error: `has \`\${${inner}}\`, which is not a template Portcullis knows; use one of ${TEMPLATE_NAMES.join(', ')} (write \`$\${\` for a literal \`\${\`)`,
      };
    if (text !== '') parts.push({ kind: 'text', text });
    text = '';
    parts.push(part);
  }
  text += value.slice(last);
  if (text !== '') parts.push({ kind: 'text', text });
  return { parts };
}

function templatePart(inner: string): HeaderTemplatePart | undefined {
  if (inner === 'portcullis.access_token') return { kind: 'access_token' };
  if (inner === 'portcullis.id_token') return { kind: 'id_token' };
  const prefix = 'portcullis.claims.';
  if (inner.startsWith(prefix) && CLAIM_NAME.test(inner.slice(prefix.length)))
    return { kind: 'claim', claim: inner.slice(prefix.length) };
  return undefined;
}

/** Whether `parts` holds anything Portcullis fills in (not only literal text). */
export function hasTemplate(parts: readonly HeaderTemplatePart[]): boolean {
  return parts.some((part) => part.kind !== 'text');
}

/** The literal text of a value without templates (`$${` unescaped): what Envoy sets as is. */
export function literalHeaderValue(value: string): string {
  const parsed = parseHeaderValue(value);
  if (parsed.error !== undefined) return value;
  return parsed.parts.map((part) => (part.kind === 'text' ? part.text : '')).join('');
}

/**
 * Checks the templates of a route's `set_request_headers` (at `path`, the map's key path): each
 * value parses; the Host header (which rewrites the host) and a public route (which has no
 * session: Envoy never asks Portcullis about it) take none. Returns whether any value has one.
 */
export function checkRequestHeaderTemplates(
  reader: Reader,
  path: string,
  headers: Readonly<Record<string, string>>,
  isPublic: boolean,
): boolean {
  let templated = false;
  for (const [name, value] of Object.entries(headers)) {
    const parsed = parseHeaderValue(value);
    if (parsed.error !== undefined) {
      reader.problem(`${path}.${name}`, parsed.error);
      continue;
    }
    if (!hasTemplate(parsed.parts)) continue;
    if (name.toLowerCase() === 'host')
      reader.problem(`${path}.${name}`, 'takes no template: the Host header names the upstream host');
    else if (isPublic)
      reader.problem(
        `${path}.${name}`,
        'has a template, which needs a signed-in user, but the route has allow_public_unauthenticated_access (Envoy never asks Portcullis about it); remove one of them',
      );
    else templated = true;
  }
  return templated;
}

/**
 * Refuses templates in a response-header map at `path` (route or global `set_response_headers`):
 * what is set there goes to the browser, where the IdP's tokens must never go. `$${` is allowed.
 */
export function refuseResponseHeaderTemplates(
  reader: Reader,
  path: string,
  headers: Readonly<Record<string, string>>,
): void {
  for (const [name, value] of Object.entries(headers)) {
    const parsed = parseHeaderValue(value);
    if (parsed.error !== undefined) reader.problem(`${path}.${name}`, parsed.error);
    else if (hasTemplate(parsed.parts))
      reader.problem(
        `${path}.${name}`,
        "takes no template: response headers reach the browser, and the identity provider's tokens and claims must not; templates work in set_request_headers only (write `$${` for a literal `${`)",
      );
  }
}

import { isIP } from 'node:net';

/** A DNS host name (RFC 1123): dot-separated labels of letters, digits and inner hyphens. */
const HOST_NAME =
  /^(?=.{1,253}\.?$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;

/** Whether `text` is a DNS host name (RFC 1123 labels, at most 253 characters, optional trailing dot). */
export function isDnsName(text: string): boolean {
  return HOST_NAME.test(text);
}

/**
 * `text` as a host name compares with a URL's `hostname`: lower case, no trailing dot, an IP
 * address as the WHATWG URL parser writes it (IPv6 in brackets, `[::1]`). Undefined when `text`
 * is not a host name or IP address: a URL, a `host:port`, a wildcard, a path. Used for settings
 * that list hosts (`programmatic_redirect_domain_whitelist`), so a mistyped entry is refused at
 * validation instead of silently never matching.
 */
export function canonicalHostName(text: string): string | undefined {
  const trimmed = text.trim();
  const bare = trimmed.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(bare);
  if (family !== 0) return new URL(`http://${family === 6 ? `[${bare}]` : bare}/`).hostname;
  if (bare !== trimmed || !HOST_NAME.test(trimmed)) return undefined;
  return trimmed.toLowerCase().replace(/\.$/, '');
}

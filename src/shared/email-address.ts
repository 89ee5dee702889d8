/**
 * E-mail addresses and their domains in the one canonical form every policy comparison uses, on
 * both sides: the address an identity provider asserts and the values written in the config
 * (`allowed_users`, `allowed_domains`, the `email`, `domain` and `user` criteria, allow and deny
 * alike). A deny on `eve@example.test` must catch `Eve@EXAMPLE.test`, and `a@evil.test@example.test`
 * must not count as an address at example.test.
 *
 * The rule (docs/email-policies.md): an address is exactly one `@`, a local part that is an
 * RFC 5322 dot-atom (RFC 6531 non-ASCII letters allowed, no quoted strings, comments or spaces,
 * at most 64 characters), and a domain that is a DNS name (not an IP literal). The canonical form
 * lower-cases the WHOLE address, local part included (as the peer and the large providers treat
 * mailboxes: `Eve@` and `eve@` are one person), after Unicode NFC, with the domain in its ASCII
 * (punycode, UTS #46) form without a trailing dot. Anything else is no address at all: a policy
 * sees it as absent, and a config value is a validation error.
 */
import { domainToASCII } from 'node:url';
import { isDnsName } from './host-name.js';

/** One dot-atom label: RFC 5322 atext, plus any non-ASCII character that is not a control, format or space. */
const ATOM = "(?:[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]|[^\\x00-\\x7f\\p{Cc}\\p{Cf}\\p{Z}])+";
const LOCAL_PART = new RegExp(`^${ATOM}(?:\\.${ATOM})*$`, 'u');
/** The same for ASCII-only local parts, which need no Unicode tables (the fast path). */
const ASCII_LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

/**
 * `text` as a canonical domain (ASCII, lower case, no trailing dot), or undefined when it is not a
 * DNS name: empty, an IP address, a wildcard, a URL, anything with spaces or a second `@`.
 */
export function canonicalDomain(text: string): string | undefined {
  // ASCII needs no UTS #46 mapping (the common case, and the per-request one: ~10x faster).
  const ascii = PRINTABLE_ASCII.test(text) ? text : domainToASCII(text.normalize('NFC'));
  if (ascii === '' || !isDnsName(ascii)) return undefined;
  const canonical = ascii.toLowerCase().replace(/\.$/, '');
  // A DNS name whose last label is all digits is an IPv4 address (or not a usable name).
  return /(?:^|\.)\d+$/.test(canonical) ? undefined : canonical;
}

/**
 * `text` as a canonical address (see the module comment), or undefined when it is not exactly one
 * well-formed address. Undefined in, undefined out, so a session without an address stays without.
 */
export function canonicalEmail(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const at = text.indexOf('@');
  if (at <= 0 || at !== text.lastIndexOf('@')) return undefined;
  const raw = text.slice(0, at);
  const ascii = ASCII_LOCAL_PART.test(raw);
  const local = ascii ? raw : raw.normalize('NFC');
  if (local.length > 64 || (!ascii && !LOCAL_PART.test(local))) return undefined;
  const domain = canonicalDomain(text.slice(at + 1));
  return domain === undefined ? undefined : `${local.toLowerCase()}@${domain}`;
}

/** The domain of an address canonicalEmail returned (everything after its one `@`). */
export function domainOfCanonical(address: string): string {
  return address.slice(address.indexOf('@') + 1);
}

/**
 * A user id as policies compare it: an id that is an address (some providers use the address as
 * `sub`) in its canonical form, any other id exactly as the provider sent it (OIDC subjects are
 * case-sensitive opaque strings, OIDC Core 2).
 */
export function canonicalUserId(id: string): string {
  return id.includes('@') ? (canonicalEmail(id) ?? id) : id;
}

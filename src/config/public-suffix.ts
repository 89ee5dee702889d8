import { createRequire } from 'node:module';
import type * as Tldts from 'tldts';

const requireModule = createRequire(import.meta.url);

/**
 * `host` split by the Public Suffix List (tldts, private domains such as `github.io` included):
 * its registrable domain and public suffix, and whether the suffix is a listed one. tldts is
 * required on first use (it is CommonJS, so synchronously): only a `cookie_domain` or a `from`
 * host ending in `.*` asks, so most configs never load its list (about 40 ms at start-up).
 */
export function publicSuffixParse(host: string): ReturnType<typeof Tldts.parse> {
  const tldts = requireModule('tldts') as typeof Tldts;
  return tldts.parse(host, { allowPrivateDomains: true });
}

/**
 * Cross-checks of global settings whose silent acceptance would weaken security or never work:
 * each is an error naming its key. Kept apart from the per-option readers
 * because they need several options at once or a judgement an option row cannot express.
 */
import { publicSuffixParse } from './public-suffix.js';
import { isLoopbackIp } from '../shared/loopback.js';
import type { ParsedValues } from './parsed-values.js';
import type { IdpProvider } from './types.js';
import type { Reader } from './value-readers.js';

/** Where Portcullis serves its own endpoints on every route host (contract/endpoints.ts). */
const OWN_PATHS = '/.portcullis/';

/** Providers that speak OAuth 2.0 only; every other built-in is OpenID Connect. */
const OAUTH2_ONLY: readonly IdpProvider[] = ['github'];

/** Runs every check below. */
export function checkSettingsSafety(reader: Reader, values: ParsedValues): void {
  checkCookieDomain(reader, values);
  checkCookieExpire(reader, values);
  checkDecisionTokenLifetime(reader, values);
  checkCallbackPath(reader, values);
  checkAdminAddress(reader, values);
  checkProviderSafety(reader, values);
}

/**
 * The checks of one provider's scopes and URL, run on the global `idp_*` keys and on each
 * `identity_providers` entry (read under the same keys, parse-identity-providers.ts).
 */
export function checkProviderSafety(reader: Reader, values: ParsedValues): void {
  checkOpenIdScope(reader, values);
  checkProviderUrl(reader, values);
}

/**
 * A cookie_domain that is a public suffix (`com`, `co.uk`, `github.io`) would share the session
 * cookie with every site under it; browsers refuse such cookies, so sign-in would loop anyway.
 */
function checkCookieDomain(reader: Reader, values: ParsedValues): void {
  const domain = values.get<string>('cookie_domain');
  if (domain === undefined) return;
  const host = domain.replace(/^\./, '').toLowerCase();
  const parsed = publicSuffixParse(host);
  const known = parsed.isIcann === true || parsed.isPrivate === true;
  if (known && parsed.publicSuffix === host)
    reader.problem(
      values.path('cookie_domain'),
      `"${domain}" is a public suffix: a cookie for it would go to every site under it (browsers refuse it); use your own domain, such as example.${host}`,
    );
}

/** A zero lifetime makes every session expire as it is made: sign-in would loop. */
function checkCookieExpire(reader: Reader, values: ParsedValues): void {
  if (values.get<number>('cookie_expire') === 0)
    reader.problem(
      values.path('cookie_expire'),
      'is 0s: every session would expire as it is made; give a lifetime such as 14h',
    );
}

/** The longest decision token: revocations are held this long, and assertions it carries live 5 minutes. */
const MAX_DECISION_TOKEN_LIFETIME_MS = 5 * 60_000;

/** A decision token may live at most MAX_DECISION_TOKEN_LIFETIME_MS (0 turns the fast path off). */
function checkDecisionTokenLifetime(reader: Reader, values: ParsedValues): void {
  const lifetime = values.get<number>('decision_token_lifetime');
  if (lifetime !== undefined && lifetime > MAX_DECISION_TOKEN_LIFETIME_MS)
    reader.problem(
      values.path('decision_token_lifetime'),
      'is longer than 5m: a decision token is the backstop when an Envoy loses its control plane, so it stays short; use 2m (the default) or `0s` to turn the fast path off',
    );
}

/** The callback path on the authenticate host must not be one of Portcullis's own endpoints. */
function checkCallbackPath(reader: Reader, values: ParsedValues): void {
  const path = values.get<string>('authenticate_callback_path');
  if (path === undefined) return;
  if (`${path}/`.toLowerCase().startsWith(OWN_PATHS))
    reader.problem(
      values.path('authenticate_callback_path'),
      `"${path}" is under ${OWN_PATHS}, where Portcullis serves its own endpoints; use a path such as /oauth2/callback`,
    );
}

/**
 * Envoy's admin interface is unauthenticated and can dump or change its whole state: it must be
 * on a loopback IP. The bootstrap refuses anything else at start; `validate` says so first.
 */
function checkAdminAddress(reader: Reader, values: ParsedValues): void {
  const address = values.get<string>('envoy_admin_address');
  if (address === undefined) return;
  const host = address.slice(0, address.lastIndexOf(':'));
  if (!isLoopbackIp(host))
    reader.problem(
      values.path('envoy_admin_address'),
      `"${address}" is not on a loopback IP: Envoy's admin interface is unauthenticated and must never be reachable from other hosts; use 127.0.0.1:<port>`,
    );
}

/** Without the `openid` scope an OpenID Connect provider returns no ID token: sign-in fails. */
function checkOpenIdScope(reader: Reader, values: ParsedValues): void {
  const scopes = values.get<string[]>('idp_scopes');
  if (scopes === undefined) return;
  const provider = values.get<IdpProvider>('idp_provider') ?? 'oidc';
  if (OAUTH2_ONLY.includes(provider) || scopes.includes('openid')) return;
  reader.problem(
    values.path('idp_scopes'),
    `lacks openid: ${provider} is an OpenID Connect provider, which returns no ID token without it; add openid`,
  );
}

/** An issuer URL is an origin and path (OpenID Connect Discovery 1.0 section 2): no query or fragment. */
function checkProviderUrl(reader: Reader, values: ParsedValues): void {
  const url = values.get<URL>('idp_provider_url');
  if (url === undefined || (url.search === '' && url.hash === '')) return;
  reader.problem(
    values.path('idp_provider_url'),
    `"${url.href}" has a query or fragment; an issuer URL has neither (OpenID Connect Discovery 1.0, section 2)`,
  );
}

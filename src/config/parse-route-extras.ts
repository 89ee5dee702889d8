import { canonicalAllowedDomains, canonicalAllowedUsers } from './parse-identity-values.js';
import { parsePolicy } from './parse-policy.js';
import type { PolicyValue } from './policy-types.js';
import { Secret } from '../shared/secret.js';
import type { RouteSettings } from './types.js';
import { describe, isPlainObject, type Reader } from './value-readers.js';

type Access = Pick<
  RouteSettings,
  | 'allow_public_unauthenticated_access'
  | 'allow_any_authenticated_user'
  | 'cors_allow_preflight'
  | 'allowed_users'
  | 'allowed_domains'
  | 'allowed_idp_claims'
  | 'policy'
  | 'pass_identity_headers'
  | 'idp_client_id'
  | 'idp_client_secret'
  | 'identity_provider'
>;

/**
 * A route's access settings: the shortcuts (public, any authenticated user, allow lists, CORS
 * preflight), the embedded policy, identity headers and per-route IdP credentials. A public route
 * with a policy or any other access setting is an error (see checkPublic); so is any-user with
 * allow lists, which would mean nothing. Per-route credentials come as a pair.
 */
export function readAccess(
  reader: Reader,
  path: string,
  raw: Record<string, unknown>,
): { [K in keyof Access]: Access[K] | undefined } {
  const at = (key: string): string => `${path}.${key}`;
  const flag = (key: string): boolean =>
    raw[key] === undefined ? false : (reader.bool(at(key), raw[key]) ?? false);
  const list = (key: string): readonly string[] =>
    raw[key] === undefined ? [] : (reader.stringList(at(key), raw[key]) ?? []);
  const isPublic = flag('allow_public_unauthenticated_access');
  const anyUser = flag('allow_any_authenticated_user');
  const users = canonicalAllowedUsers(reader, at('allowed_users'), list('allowed_users'));
  const domains = canonicalAllowedDomains(reader, at('allowed_domains'), list('allowed_domains'));
  const lists = users.length > 0 || domains.length > 0;
  if (isPublic) checkPublic(reader, path, raw);
  if (anyUser && lists) {
    reader.problem(
      at('allow_any_authenticated_user'),
      'cannot be combined with allowed_users or allowed_domains: any signed-in user is admitted, so the lists would mean nothing; remove one side',
    );
  }
  const clientId =
    raw.idp_client_id === undefined ? undefined : reader.string(at('idp_client_id'), raw.idp_client_id);
  const clientSecret =
    raw.idp_client_secret === undefined
      ? undefined
      : reader.secret(at('idp_client_secret'), raw.idp_client_secret);
  if (clientId?.trim() === '')
    reader.problem(at('idp_client_id'), 'is empty; give the client id issued by the identity provider');
  if (clientSecret?.trim() === '') reader.problem(at('idp_client_secret'), 'is empty');
  if ((raw.idp_client_id === undefined) !== (raw.idp_client_secret === undefined)) {
    reader.problem(
      path,
      'per-route identity-provider credentials need both idp_client_id and idp_client_secret',
    );
  }
  return {
    allow_public_unauthenticated_access: isPublic,
    allow_any_authenticated_user: anyUser,
    cors_allow_preflight: flag('cors_allow_preflight'),
    allowed_users: users,
    allowed_domains: domains,
    allowed_idp_claims:
      raw.allowed_idp_claims === undefined
        ? {}
        : (readClaims(reader, at('allowed_idp_claims'), raw.allowed_idp_claims) ?? {}),
    policy:
      raw.policy === undefined || raw.policy === null
        ? []
        : (parsePolicy(reader, at('policy'), raw.policy) ?? []),
    pass_identity_headers:
      raw.pass_identity_headers === undefined
        ? undefined
        : reader.bool(at('pass_identity_headers'), raw.pass_identity_headers),
    idp_client_id: clientId,
    idp_client_secret: clientSecret === undefined ? undefined : new Secret(clientSecret),
    // Whether the name is defined is checked with the global settings (parse-identity.ts).
    identity_provider:
      raw.identity_provider === undefined
        ? undefined
        : reader.string(at('identity_provider'), raw.identity_provider),
  };
}

/** The access keys a public route must not carry: none of them would be checked. */
const PUBLIC_EXCLUDES = [
  'policy',
  'allowed_users',
  'allowed_domains',
  'allowed_idp_claims',
  'allow_any_authenticated_user',
] as const;

/**
 * A public route is never sent to the authorizer, so a `policy` on it (even a deny) or an access
 * shortcut would silently not apply: an error naming both keys. Keys that say nothing (`false`, an
 * empty list or map) are let through.
 */
function checkPublic(reader: Reader, path: string, raw: Record<string, unknown>): void {
  const saysNothing = (value: unknown): boolean =>
    value === undefined ||
    value === null ||
    value === false ||
    (Array.isArray(value) && value.length === 0) ||
    (isPlainObject(value) && Object.keys(value).length === 0);
  const given = PUBLIC_EXCLUDES.filter((key) => !saysNothing(raw[key]));
  if (given.length === 0) return;
  reader.problem(
    `${path}.allow_public_unauthenticated_access`,
    `cannot be combined with ${given.join(', ')}: a public route admits everyone and is never checked, so ${given.length === 1 ? 'that key' : 'those keys'} (a deny rule included) would not apply; remove allow_public_unauthenticated_access or ${given.join(', ')}`,
  );
}

function readClaims(reader: Reader, path: string, raw: unknown): Record<string, PolicyValue[]> | undefined {
  if (!isPlainObject(raw))
    return reader.problem(path, `expected a map of claim name to values, got ${describe(raw)}`);
  const out: Record<string, PolicyValue[]> = {};
  for (const [claim, values] of Object.entries(raw)) {
    const items = Array.isArray(values) ? values : [values];
    const good = items.filter((value): value is PolicyValue =>
      ['string', 'number', 'boolean'].includes(typeof value),
    );
    if (good.length !== items.length || items.length === 0) {
      reader.problem(`${path}.${claim}`, 'expected a value or a list of strings, numbers or booleans');
    } else {
      out[claim] = good;
    }
  }
  return out;
}

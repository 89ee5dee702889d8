import { canonicalJson } from '../shared/canonical-json.js';
import { shortHash } from '../shared/hash.js';
import type { Secret } from '../shared/secret.js';
import type { Config, IdpProvider, RouteSettings } from './types.js';

/**
 * One identity-provider client as sign-in uses it: the global `idp_*` settings, or those with a
 * route's own `idp_client_id` / `idp_client_secret` (spec 5.3: the IdP then sees each protected
 * application separately).
 */
export interface IdentityProviderSettings {
  /** Stable id of this client (see `identityProviderId`); sessions and routes are bound to it. */
  readonly id: string;
  readonly provider: IdpProvider;
  /** Discovery base URL; undefined for providers with a fixed one (google, gitlab, ...). */
  readonly providerUrl: URL | undefined;
  readonly clientId: string;
  readonly clientSecret: Secret<string>;
  /** `idp_scopes` as set; undefined means the provider's defaults. */
  readonly scopes: readonly string[] | undefined;
  readonly requestParams: Readonly<Record<string, string>>;
  /** `idp_trust_unverified_email`: unverified addresses count for address policies. */
  readonly trustUnverifiedEmail: boolean;
}

/** The id of a route that has no identity provider at all (sign-in not configured). */
export const NO_IDENTITY_PROVIDER = 'none';

/**
 * A stable id for a client: 16 hex digits of SHA-256 over the settings that decide who a session
 * belongs to (provider, URL, client id, scopes, request params, and whether unverified addresses
 * are trusted, only when they are, so ids made before that setting existed stay the same: turning
 * it on or off makes every session of the client foreign, and its users sign in again under the
 * new rule; never the secret, so it can be logged and sent in URLs). Stable across restarts and replicas, so a session made by one
 * instance is bound to the same client on every other.
 */
export function identityProviderId(settings: Omit<IdentityProviderSettings, 'id' | 'clientSecret'>): string {
  return shortHash(
    canonicalJson({
      provider: settings.provider,
      url: settings.providerUrl?.href,
      client: settings.clientId,
      scopes: settings.scopes,
      params: settings.requestParams,
      ...(settings.trustUnverifiedEmail ? { trustUnverifiedEmail: true } : {}),
    }),
  );
}

/**
 * The client `route` signs users in with: its own `idp_client_id`/`idp_client_secret` with the
 * global provider settings, or the global client. Undefined when sign-in is not configured (no
 * provider or client), which validation refuses whenever a route needs a user.
 */
export function identityProviderFor(
  config: Config,
  route?: Pick<RouteSettings, 'idp_client_id' | 'idp_client_secret'>,
): IdentityProviderSettings | undefined {
  const clientId = route?.idp_client_id ?? config.idp_client_id;
  const clientSecret = route?.idp_client_secret ?? config.idp_client_secret;
  if (config.idp_provider === undefined || clientId === undefined || clientSecret === undefined)
    return undefined;
  const base = {
    provider: config.idp_provider,
    providerUrl: config.idp_provider_url,
    clientId,
    scopes: config.idp_scopes,
    requestParams: config.idp_request_params,
    trustUnverifiedEmail: config.idp_trust_unverified_email,
  };
  return { ...base, id: identityProviderId(base), clientSecret };
}

/**
 * Every distinct client of `config` (the global one first, then routes' own, each once), which the
 * authenticate service builds an OIDC client for.
 */
export function identityProviders(config: Config): IdentityProviderSettings[] {
  const byId = new Map<string, IdentityProviderSettings>();
  const global = identityProviderFor(config);
  if (global !== undefined) byId.set(global.id, global);
  for (const route of config.routes) {
    if (route.idp_client_id === undefined) continue;
    const own = identityProviderFor(config, route);
    if (own !== undefined && !byId.has(own.id)) byId.set(own.id, own);
  }
  return [...byId.values()];
}

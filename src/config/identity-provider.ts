import { canonicalJson } from '../shared/canonical-json.js';
import { shortHash } from '../shared/hash.js';
import { DEFAULT_PROVIDER_NAME } from '../shared/idp-providers.js';
import type { Secret } from '../shared/secret.js';
import type { Config, IdpProvider, RouteSettings } from './types.js';

/**
 * One identity-provider client as sign-in uses it: the global `idp_*` settings or a named entry of
 * `identity_providers`, either with a route's own `idp_client_id` / `idp_client_secret` in place
 * of its client (spec 5.3: the IdP then sees each protected application separately).
 */
export interface IdentityProviderSettings {
  /** Stable id of this client (see `identityProviderId`); sessions and routes are bound to it. */
  readonly id: string;
  /** The provider's name: its key in `identity_providers`, or DEFAULT_PROVIDER_NAME for the `idp_*` keys. */
  readonly name: string;
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

export { DEFAULT_PROVIDER_NAME };

/** The id of a route that has no identity provider at all (sign-in not configured). */
export const NO_IDENTITY_PROVIDER = 'none';

/**
 * A stable id for a client: 16 hex digits of SHA-256 over the settings that decide who a session
 * belongs to (provider, URL, client id, scopes, request params, and whether unverified addresses
 * are trusted, only when they are, so ids made before that setting existed stay the same: turning
 * it on or off makes every session of the client foreign, and its users sign in again under the
 * new rule; never the secret, so it can be logged and sent in URLs; nor the name, so the same
 * client under another name is the same client). Stable across restarts and replicas, so a session
 * made by one instance is bound to the same client on every other.
 */
export function identityProviderId(
  settings: Omit<IdentityProviderSettings, 'id' | 'name' | 'clientSecret'>,
): string {
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
 * The client `route` signs users in with: the provider it names in `identity_provider` (else the
 * global one), with the route's own `idp_client_id`/`idp_client_secret` in place of that
 * provider's client when it has them. Undefined when that provider is not configured (no provider
 * or client, or an unknown name), which validation refuses whenever a route needs a user.
 */
export function identityProviderFor(
  config: Config,
  route?: Pick<RouteSettings, 'idp_client_id' | 'idp_client_secret' | 'identity_provider'>,
): IdentityProviderSettings | undefined {
  const name = route?.identity_provider ?? DEFAULT_PROVIDER_NAME;
  const chosen = name === DEFAULT_PROVIDER_NAME ? globalProvider(config) : namedProvider(config, name);
  if (chosen === undefined) return undefined;
  const clientId = route?.idp_client_id ?? chosen.clientId;
  const clientSecret = route?.idp_client_secret ?? chosen.clientSecret;
  if (clientId === undefined || clientSecret === undefined) return undefined;
  const { clientSecret: _unused, ...settings } = { ...chosen, clientId };
  return { ...settings, id: identityProviderId(settings), name, clientSecret };
}

/** A provider's settings before a route's own client replaces its client. */
type ProviderBase = Omit<IdentityProviderSettings, 'id' | 'name' | 'clientId' | 'clientSecret'> & {
  readonly clientId: string | undefined;
  readonly clientSecret: Secret<string> | undefined;
};

/** The global `idp_*` provider, undefined without `idp_provider` (parsing sets it with a URL). */
function globalProvider(config: Config): ProviderBase | undefined {
  if (config.idp_provider === undefined) return undefined;
  return {
    provider: config.idp_provider,
    providerUrl: config.idp_provider_url,
    clientId: config.idp_client_id,
    clientSecret: config.idp_client_secret,
    scopes: config.idp_scopes,
    requestParams: config.idp_request_params,
    trustUnverifiedEmail: config.idp_trust_unverified_email,
  };
}

/** The `identity_providers` entry `name`, or undefined when there is none by that name. */
function namedProvider(config: Config, name: string): ProviderBase | undefined {
  const named = config.identity_providers ?? {};
  if (!Object.hasOwn(named, name)) return undefined;
  const entry = named[name];
  if (entry === undefined) return undefined;
  return {
    provider: entry.provider,
    providerUrl: entry.provider_url,
    clientId: entry.client_id,
    clientSecret: entry.client_secret,
    scopes: entry.scopes,
    requestParams: entry.request_params,
    trustUnverifiedEmail: entry.trust_unverified_email,
  };
}

/**
 * Every distinct client of `config` (the global one first, then each named provider in name
 * order, then routes' own clients, each once), which the authenticate service builds an OIDC
 * client for.
 */
export function identityProviders(config: Config): IdentityProviderSettings[] {
  const byId = new Map<string, IdentityProviderSettings>();
  const add = (settings: IdentityProviderSettings | undefined): void => {
    if (settings !== undefined && !byId.has(settings.id)) byId.set(settings.id, settings);
  };
  add(identityProviderFor(config));
  for (const name of Object.keys(config.identity_providers ?? {}).sort())
    add(identityProviderFor(config, { identity_provider: name }));
  for (const route of config.routes) {
    if (route.idp_client_id !== undefined) add(identityProviderFor(config, route));
  }
  return [...byId.values()];
}

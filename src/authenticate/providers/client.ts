/**
 * Builds the ProviderClient for one configured identity-provider client: GitHub's plain OAuth 2.0
 * client, or the OpenID Connect client for every other built-in. Nothing is fetched here:
 * discovery happens on first use (registry.ts keeps clients, and with them their caches, across
 * reloads).
 */
import type { ProviderClient, ProviderConfig } from '../types.js';
import { BUILTIN_PROVIDERS } from './builtin.js';
import { resolveOptions } from './common.js';
import type { ProviderClientOptions } from './common.js';
import { GithubProviderClient } from './github.js';
import { OidcProviderClient } from './oidc.js';

export type { ProviderClientOptions } from './common.js';

/**
 * The client for `config`. Throws (synchronously) only for a config validation should have
 * refused: a provider that needs `idp_provider_url` without one.
 */
export function createProviderClient(
  config: ProviderConfig,
  options: ProviderClientOptions = {},
): ProviderClient {
  const resolved = resolveOptions(options);
  return BUILTIN_PROVIDERS[config.provider].protocol === 'oauth2'
    ? new GithubProviderClient(config, resolved)
    : new OidcProviderClient(config, resolved);
}

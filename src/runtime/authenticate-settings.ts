import type { Config } from '../config/types.js';
import { identityProviders, type IdentityProviderSettings } from '../config/identity-provider.js';
import type { AuthenticateSettings, ProviderConfig } from '../authenticate/types.js';

/**
 * Config -> the authenticate service's settings (authenticate never reads Config). Secrets are
 * revealed here, at the one place they are handed to the code that uses them. Undefined when the
 * config has no `authenticate_service_url` (validation then refuses every route that needs a user).
 */
export function authenticateSettings(
  config: Config,
  secrets: { readonly sharedSecret: Uint8Array; readonly cookieSecret: Uint8Array },
): AuthenticateSettings | undefined {
  const url = config.authenticate_service_url;
  if (url === undefined) return undefined;
  return {
    authenticateUrl: new URL(url.origin),
    callbackPath: config.authenticate_callback_path,
    cookie: {
      name: config.cookie_name,
      domain: config.cookie_domain,
      expireMs: config.cookie_expire_ms,
      httpOnly: config.cookie_http_only,
      sameSite: config.cookie_same_site,
      secure: !config.insecure_server,
    },
    cookieSecret: secrets.cookieSecret,
    sharedSecret: secrets.sharedSecret,
    programmaticRedirectDomains: config.programmatic_redirect_domain_whitelist,
    signoutRedirectUrl: config.signout_redirect_url,
    providers: new Map(identityProviders(config).map((settings) => [settings.id, providerConfig(settings)])),
  };
}

/** One client's settings as the providers module takes them. */
function providerConfig(settings: IdentityProviderSettings): ProviderConfig {
  return {
    id: settings.id,
    provider: settings.provider,
    providerUrl: settings.providerUrl,
    clientId: settings.clientId,
    clientSecret: settings.clientSecret.reveal(),
    scopes: settings.scopes,
    requestParams: settings.requestParams,
    trustUnverifiedEmail: settings.trustUnverifiedEmail,
  };
}

/**
 * Where Portcullis's own HTTP server listens (sign-in, callback, sign-out, user page), reached by
 * Envoy's `portcullis-http` cluster: the host of `grpc_address` and the next port (5444 beside the
 * default 5443). Derived from the config, never picked at random, so a restarted Portcullis
 * compiles the same cluster and a running Envoy rebuilds nothing when it reconnects.
 * A `grpc_address` with port 0 (tests without Envoy) gives port 0: any free port.
 */
export function ownHttpAddress(grpcAddress: { host: string; port: number }): { host: string; port: number } {
  return { host: grpcAddress.host, port: grpcAddress.port === 0 ? 0 : grpcAddress.port + 1 };
}

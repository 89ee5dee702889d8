/**
 * The built-in identity providers (`idp_provider`): where each one's discovery lives, its default
 * scopes and authorization parameters, and its quirks (pomerium-behaviour.md section 4). Data
 * only; the clients (oidc.ts, github.ts) read it.
 */
import type { ProviderConfig } from '../types.js';
import type { IdpProviderName } from './names.js';

/** What the clients need to know about one provider. */
export interface BuiltinProvider {
  /** `oidc`: discovery and ID tokens; `oauth2`: plain OAuth 2.0 plus a REST user API (GitHub). */
  readonly protocol: 'oidc' | 'oauth2';
  /** Discovery base when `idp_provider_url` is unset; undefined: the URL is required. */
  readonly defaultUrl: string | undefined;
  readonly defaultScopes: readonly string[];
  /**
   * Authorization parameters sent unless `idp_request_params` sets the same key (merged, not
   * replaced: setting `hd` for Google must not lose `access_type=offline` and with it refresh).
   */
  readonly defaultParams: Readonly<Record<string, string>>;
  /** The IdP posts the callback (`response_mode=form_post`). */
  readonly formPost: boolean;
  /** Spaces in the authorization URL's query as `%20`, not `+` (Apple). */
  readonly percentSpaces: boolean;
  /** Logout when discovery has no `end_session_endpoint` (Auth0's and Cognito's own). */
  readonly fallbackLogout: 'auth0' | 'cognito' | undefined;
  /** Revocation when discovery has none (Cognito: `/oauth2/revoke` on the hosted-UI domain). */
  readonly fallbackRevocation: 'cognito' | undefined;
}

const OIDC_SCOPES = ['openid', 'profile', 'email', 'offline_access'];

const base: BuiltinProvider = {
  protocol: 'oidc',
  defaultUrl: undefined,
  defaultScopes: OIDC_SCOPES,
  defaultParams: {},
  formPost: false,
  percentSpaces: false,
  fallbackLogout: undefined,
  fallbackRevocation: undefined,
};

/** The table, one entry per `idp_provider` name. */
export const BUILTIN_PROVIDERS: Readonly<Record<IdpProviderName, BuiltinProvider>> = {
  oidc: base,
  okta: base,
  ping: base,
  gitlab: { ...base, defaultUrl: 'https://gitlab.com', defaultScopes: ['openid', 'profile', 'email'] },
  // Google has no offline_access scope: access_type=offline asks for a refresh token, and
  // prompt=consent makes Google issue one on every sign-in, not only the first.
  google: {
    ...base,
    defaultUrl: 'https://accounts.google.com',
    defaultScopes: ['openid', 'profile', 'email'],
    defaultParams: { access_type: 'offline', prompt: 'select_account consent' },
  },
  // The multi-tenant endpoint's issuer has a {tenantid} placeholder: openid-client resolves it
  // per ID token (its Entra ID handling), so the issuer is still checked.
  azure: {
    ...base,
    defaultUrl: 'https://login.microsoftonline.com/common/v2.0',
    defaultParams: { prompt: 'select_account' },
  },
  auth0: { ...base, fallbackLogout: 'auth0' },
  cognito: {
    ...base,
    defaultScopes: ['openid', 'email', 'profile'],
    fallbackLogout: 'cognito',
    fallbackRevocation: 'cognito',
  },
  onelogin: {
    ...base,
    defaultUrl: 'https://openid-connect.onelogin.com/oidc',
    defaultScopes: ['openid', 'profile', 'email', 'groups', 'offline_access'],
  },
  apple: {
    ...base,
    defaultUrl: 'https://appleid.apple.com',
    defaultScopes: ['name', 'email'],
    formPost: true,
    percentSpaces: true,
  },
  github: {
    ...base,
    protocol: 'oauth2',
    defaultUrl: 'https://github.com',
    defaultScopes: ['user:email', 'read:org'],
  },
};

/** The discovery (or, for GitHub, web) base URL of `config`; throws when a required URL is missing. */
export function providerBaseUrl(config: ProviderConfig): URL {
  const builtin = BUILTIN_PROVIDERS[config.provider];
  let url =
    config.providerUrl ?? (builtin.defaultUrl === undefined ? undefined : new URL(builtin.defaultUrl));
  if (url === undefined) throw new Error(`idp_provider ${config.provider} needs idp_provider_url`);
  // Auth0's issuer ends in '/', and discovery compares it exactly.
  if (config.provider === 'auth0' && !url.pathname.endsWith('/')) url = new URL(`${url.href}/`);
  return url;
}

/**
 * The scopes to ask for: `idp_scopes` when set, else the provider's defaults (OneLogin's v2 API,
 * a URL with `/oidc/2`, has no offline_access).
 */
export function providerScopes(config: ProviderConfig): readonly string[] {
  if (config.scopes !== undefined) return config.scopes;
  const defaults = BUILTIN_PROVIDERS[config.provider].defaultScopes;
  if (config.provider === 'onelogin' && config.providerUrl?.pathname.includes('/oidc/2') === true)
    return defaults.filter((scope) => scope !== 'offline_access');
  return defaults;
}

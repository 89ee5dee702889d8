/**
 * Built-in identity providers selected by `idp_provider`: one list for the option table, the IR and
 * the providers module.
 */
export const IDP_PROVIDERS = [
  'oidc',
  'google',
  'azure',
  'okta',
  'auth0',
  'cognito',
  'gitlab',
  'onelogin',
  'ping',
  'apple',
  'github',
] as const;
export type IdpProvider = (typeof IDP_PROVIDERS)[number];

/**
 * The name of the provider the global `idp_*` keys set: routes use it unless they name one of
 * `identity_providers`, and the user page shows it for sessions it made.
 */
export const DEFAULT_PROVIDER_NAME = 'default';

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

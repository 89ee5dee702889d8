/** Built-in identity providers selected by `idp_provider` (the same list as config's IDP_PROVIDERS). */
export type IdpProviderName =
  | 'oidc'
  | 'google'
  | 'azure'
  | 'okta'
  | 'auth0'
  | 'cognito'
  | 'gitlab'
  | 'onelogin'
  | 'ping'
  | 'apple'
  | 'github';

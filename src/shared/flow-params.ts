/**
 * The authorization-request parameters the sign-in flow sets itself. One list for the two places
 * that must agree on it: config validation, which refuses `idp_request_params` naming one (it
 * could only break the flow or weaken it: a fixed `state`, `nonce` or PKCE challenge, another
 * redirect URI or client), and the provider code, which never lets one through.
 */

/**
 * Names `idp_request_params` may not set: the client, the redirect URI, the response type and
 * mode, the scope (use `idp_scopes`), `state`, `nonce` and the PKCE challenge with its method
 * (OAuth 2.0 RFC 6749 4.1.1, OIDC Core 3.1.2.1, PKCE RFC 7636 4.3). Compared exactly, as the
 * parameters themselves are case-sensitive.
 */
export const FLOW_REQUEST_PARAMS: readonly string[] = [
  'client_id',
  'redirect_uri',
  'response_type',
  'response_mode',
  'scope',
  'state',
  'nonce',
  'code_challenge',
  'code_challenge_method',
];

/** True when `name` is one of FLOW_REQUEST_PARAMS. */
export function isFlowRequestParam(name: string): boolean {
  return FLOW_REQUEST_PARAMS.includes(name);
}

/**
 * The request's host as the authorizer uses it. Envoy keeps the port the client sent (listener.ts)
 * and has already validated the authority and stripped a trailing dot; these only normalise it.
 */

/**
 * The host name of an `:authority` value: lower case, without a `:port` (an IPv6 literal keeps its
 * brackets). For comparing with a configured host name, such as the authenticate host.
 */
export function hostnameOf(authority: string): string {
  return authority.replace(/:[0-9]*$/, '').toLowerCase();
}

/**
 * The host as the identity assertion names it (`aud`, and `iss` in `host_only` format): lower case,
 * with the port the client sent unless it is the scheme's default (spec 5.5: port-specific).
 */
export function assertionHost(authority: string, scheme: string): string {
  const host = authority.toLowerCase();
  const defaultPort = scheme === 'http' ? ':80' : ':443';
  return host.endsWith(defaultPort) ? host.slice(0, -defaultPort.length) : host;
}

/** Issuer and audience of the identity assertion for one request. */
export interface AssertionTarget {
  readonly issuer: string;
  readonly audience: string;
}

/**
 * `aud` is the request host (`assertionHost`); `iss` is the same (`host_only`) or
 * `<scheme>://<host>/` (`uri`, with the scheme the request used; https when Envoy sent none).
 */
export function assertionTarget(
  authority: string,
  scheme: string,
  issuerFormat: 'host_only' | 'uri',
): AssertionTarget {
  const audience = assertionHost(authority, scheme);
  return {
    audience,
    issuer: issuerFormat === 'uri' ? `${scheme === '' ? 'https' : scheme}://${audience}/` : audience,
  };
}

/** Splits `host:port`, `:port` or `[v6]:port`; an empty host means all interfaces (0.0.0.0). */
export function splitHostPort(address: string): { host: string; port: number } {
  const separator = address.lastIndexOf(':');
  const host = address.slice(0, separator).replace(/^\[|\]$/g, '');
  return { host: host === '' ? '0.0.0.0' : host, port: Number(address.slice(separator + 1)) };
}

/**
 * The host and port of a service URL (`authorize_service_url`, `authenticate_internal_service_url`,
 * `databroker_service_url`; validated origins), the scheme's port when it names none.
 */
export function serviceTarget(url: URL): { host: string; port: number } {
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port };
}

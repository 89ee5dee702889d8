/** Splits `host:port`, `:port` or `[v6]:port`; an empty host means all interfaces (0.0.0.0). */
export function splitHostPort(address: string): { host: string; port: number } {
  const separator = address.lastIndexOf(':');
  const host = address.slice(0, separator).replace(/^\[|\]$/g, '');
  return { host: host === '' ? '0.0.0.0' : host, port: Number(address.slice(separator + 1)) };
}

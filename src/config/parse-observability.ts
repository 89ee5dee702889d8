import type { ParsedValues } from './parsed-values.js';
import { Secret } from '../shared/secret.js';
import type { Reader } from './value-readers.js';

/**
 * Checks the edge and observability options that depend on others, and returns
 * `metrics_basic_auth` decoded (`user:password`), or undefined when unset or invalid:
 * - `metrics_basic_auth` is base64 (the peer's form) of `user:password` with a non-empty user;
 * - `http_redirect_addr` redirects to HTTPS, so `address` must serve TLS (not `insecure_server`),
 *   and it cannot take the port `address` listens on;
 * - `otel_exporter_otlp_endpoint` is an origin (the exporters add their own paths).
 * Messages never show a secret value.
 */
export function checkObservability(reader: Reader, values: ParsedValues): Secret<string> | undefined {
  const redirect = values.get<string>('http_redirect_addr');
  if (redirect !== undefined) {
    if (values.get('insecure_server') === true) {
      reader.problem(
        values.path('http_redirect_addr'),
        'redirects to HTTPS, but insecure_server serves plain HTTP on address: remove one of them',
      );
    } else if (portOf(redirect) === portOf(values.get<string>('address') ?? ':443')) {
      reader.problem(
        values.path('http_redirect_addr'),
        `takes the port of address (${redirect}): use another, usually :80`,
      );
    }
  }
  const endpoint = values.get<URL>('otel_exporter_otlp_endpoint');
  if (
    endpoint !== undefined &&
    (endpoint.pathname !== '/' || endpoint.search !== '' || endpoint.hash !== '')
  ) {
    reader.problem(
      values.path('otel_exporter_otlp_endpoint'),
      `must be an origin (${endpoint.origin}): the OTLP exporters add their own paths`,
    );
  }
  const auth = values.get<Secret<string>>('metrics_basic_auth');
  if (auth === undefined) return undefined;
  const decoded = decodeBasicAuth(auth.reveal());
  if (decoded === undefined) {
    reader.problem(
      values.path('metrics_basic_auth'),
      'must be base64 of user:password (`echo -n user:password | base64`); the value is secret and not shown',
    );
    return undefined;
  }
  return new Secret(decoded);
}

/** `user:password` from its base64, or undefined when it is not base64 of that shape. */
function decodeBasicAuth(text: string): string | undefined {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed)) return undefined;
  const decoded = Buffer.from(trimmed, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon > 0 && !/[\r\n\0]/.test(decoded) ? decoded : undefined;
}

function portOf(address: string): string {
  return address.slice(address.lastIndexOf(':') + 1);
}

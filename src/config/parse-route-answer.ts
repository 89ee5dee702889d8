/**
 * Routes that answer by themselves (`redirect` and `response`, as the peer defines them): Envoy
 * answers them without forwarding, after the route's policy has admitted the request like any
 * other route's. A route gives exactly one of `to`, `redirect` and `response` (parse-route.ts).
 */
import { canonicalHostName } from './host-name.js';
import type { DirectResponseSettings, RedirectSettings } from './types.js';
import { describe, isPlainObject, type Reader } from './value-readers.js';

/** The redirect codes Envoy can send (its RedirectResponseCode), as the peer accepts them. */
const REDIRECT_CODES = [301, 302, 303, 307, 308] as const;
const REDIRECT_KEYS = [
  'https_redirect',
  'scheme_redirect',
  'host_redirect',
  'port_redirect',
  'path_redirect',
  'prefix_rewrite',
  'response_code',
  'strip_query',
];
/** The keys that change the URL a redirect points at; a redirect with none of them would loop. */
const URL_CHANGES = REDIRECT_KEYS.filter((key) => key !== 'response_code');

/**
 * The largest `response.body`, in UTF-8 bytes: Envoy's own bound on an inline direct-response
 * body (RouteConfiguration `max_direct_response_body_size_bytes`, 4 KiB by default), which a
 * larger body would make it reject the whole route table over.
 */
export const MAX_RESPONSE_BODY_BYTES = 4096;

/**
 * Keys that say how an HTTP request is forwarded: rewrites, request and response headers, upstream TLS,
 * identity headers. Meaningless for a TCP route (bytes are tunnelled) and for a route that answers
 * by itself.
 */
const HTTP_REQUEST_KEYS = [
  'prefix_rewrite',
  'regex_rewrite_pattern',
  'regex_rewrite_substitution',
  'allow_websockets',
  'set_request_headers',
  'remove_request_headers',
  'rewrite_response_headers',
  'preserve_host_header',
  'host_rewrite',
  'tls_skip_verify',
  'tls_server_name',
  'tls_custom_ca',
  'tls_custom_ca_file',
  'tls_client_cert',
  'tls_client_key',
  'tls_client_cert_file',
  'tls_client_key_file',
  'pass_identity_headers',
  'pass_request_identity_headers',
];

/**
 * Route keys that only say how to forward (upstreams, rewrites, timeouts, request headers, the
 * identity sent upstream). A route that answers by itself never forwards, so setting one there
 * does nothing: a warning naming the key (warnInapplicableKeys).
 */
const FORWARDING_KEYS = [
  ...HTTP_REQUEST_KEYS,
  'load_balancing_policy',
  'health_checks',
  'outlier_detection',
  'healthy_panic_threshold',
  'allow_restricted_upstream',
  'timeout',
  'idle_timeout',
];

/**
 * `routes[i].redirect`: answered by Envoy with a redirect. Only the peer's fields; the response
 * code must be 301, 302, 303, 307 or 308 (Envoy's default, when unset, is 301); `path_redirect`
 * and `prefix_rewrite`, and `https_redirect` and `scheme_redirect`, exclude each other; the
 * scheme is http or https, the host a bare host name or IP address, paths start with "/"; and at
 * least one field must change the URL (a redirect to the same URL would loop). Undefined, with
 * every problem recorded at its key path (`routes[3].redirect.response_code`), when invalid.
 */
export function readRedirect(reader: Reader, path: string, raw: unknown): RedirectSettings | undefined {
  if (!isPlainObject(raw))
    return reader.problem(
      path,
      `expected a redirect map (host_redirect, path_redirect, ...), got ${describe(raw)}`,
    );
  const before = reader.problems.length;
  for (const key of Object.keys(raw).filter((name) => !REDIRECT_KEYS.includes(name))) {
    reader.problem(`${path}.${key}`, `unknown redirect field; use ${REDIRECT_KEYS.join(', ')}`);
  }
  const at = (key: string): string => `${path}.${key}`;
  const out: Record<string, unknown> = {};
  for (const key of ['https_redirect', 'strip_query'])
    if (raw[key] !== undefined) out[key] = reader.bool(at(key), raw[key]);
  for (const key of ['scheme_redirect', 'host_redirect', 'path_redirect', 'prefix_rewrite']) {
    if (raw[key] !== undefined) out[key] = reader.string(at(key), raw[key]);
  }
  if (raw.port_redirect !== undefined)
    out.port_redirect = reader.integer(at('port_redirect'), raw.port_redirect, 1, 65535);
  if (raw.response_code !== undefined) out.response_code = readCode(reader, at('response_code'), raw);
  checkRedirectValues(reader, path, out);
  if (!URL_CHANGES.some((key) => out[key] !== undefined && out[key] !== false))
    reader.problem(
      path,
      `changes nothing, so it would redirect to the same URL (a loop); set one of ${URL_CHANGES.join(', ')}`,
    );
  return reader.problems.length === before ? (out as RedirectSettings) : undefined;
}

function readCode(reader: Reader, path: string, raw: Record<string, unknown>): number | undefined {
  const code = reader.integer(path, raw.response_code, 100, 599);
  if (code !== undefined && !(REDIRECT_CODES as readonly number[]).includes(code))
    reader.problem(
      path,
      `unsupported redirect response code ${code} (supported values: 301, 302, 303, 307, 308)`,
    );
  return code;
}

/** The scheme, host and paths of a redirect have the forms Envoy puts into a Location header. */
function checkRedirectValues(reader: Reader, path: string, out: Record<string, unknown>): void {
  const at = (key: string): string => `${path}.${key}`;
  if (typeof out.scheme_redirect === 'string' && !['http', 'https'].includes(out.scheme_redirect))
    reader.problem(at('scheme_redirect'), 'must be http or https');
  if (typeof out.host_redirect === 'string' && canonicalHostName(out.host_redirect) === undefined)
    reader.problem(
      at('host_redirect'),
      `expected a host name or IP address, got "${out.host_redirect}" (the scheme, port and path have their own fields: scheme_redirect, port_redirect, path_redirect)`,
    );
  for (const key of ['path_redirect', 'prefix_rewrite']) {
    const value = out[key];
    if (typeof value !== 'string') continue;
    if (!value.startsWith('/')) reader.problem(at(key), 'must start with "/"');
    else if (/[\s\0]/.test(value)) reader.problem(at(key), 'must not contain whitespace or NUL');
  }
  if (out.path_redirect !== undefined && out.prefix_rewrite !== undefined)
    reader.problem(path, 'set only one of path_redirect and prefix_rewrite');
  if (out.https_redirect === true && out.scheme_redirect !== undefined)
    reader.problem(path, 'set only one of https_redirect and scheme_redirect');
}

/**
 * `routes[i].response`: a fixed answer from Envoy, `{status, body}`. The status is required
 * (200-599, what Envoy accepts); the body is optional text of at most MAX_RESPONSE_BODY_BYTES
 * UTF-8 bytes, sent as is (its Content-Type comes from `set_response_headers`).
 */
export function readResponse(reader: Reader, path: string, raw: unknown): DirectResponseSettings | undefined {
  if (!isPlainObject(raw)) return reader.problem(path, `expected {status, body}, got ${describe(raw)}`);
  const before = reader.problems.length;
  for (const key of Object.keys(raw).filter((name) => name !== 'status' && name !== 'body')) {
    reader.problem(`${path}.${key}`, 'unknown response field; use status and body');
  }
  const status =
    raw.status === undefined
      ? reader.problem(`${path}.status`, 'is required (200-599)')
      : reader.integer(`${path}.status`, raw.status, 200, 599);
  const body = raw.body === undefined || raw.body === null ? '' : reader.string(`${path}.body`, raw.body);
  const size = Buffer.byteLength(body ?? '', 'utf8');
  if (size > MAX_RESPONSE_BODY_BYTES)
    reader.problem(
      `${path}.body`,
      `is ${size} bytes; a response body is at most ${MAX_RESPONSE_BODY_BYTES} bytes (Envoy holds it in the route table)`,
    );
  return reader.problems.length === before ? { status: status as number, body: body ?? '' } : undefined;
}

/**
 * A route that answers by itself (`answer`) has no use for keys that only say how to forward
 * (FORWARDING_KEYS), nor a TCP route (`answer` undefined) for those of an HTTP request
 * (HTTP_REQUEST_KEYS, and `set_response_headers`): each one set to something (not `false`, an
 * empty list or an empty map) is a warning at its key path, ignored as the peer ignores it, so
 * nothing a user writes is silently dropped. Access settings and matchers still apply.
 */
export function warnInapplicableKeys(
  reader: Reader,
  path: string,
  raw: Record<string, unknown>,
  answer: 'redirect' | 'response' | undefined,
): void {
  const keys = answer === undefined ? [...HTTP_REQUEST_KEYS, 'set_response_headers'] : FORWARDING_KEYS;
  const why =
    answer === undefined
      ? 'a TCP route and is ignored: it tunnels bytes'
      : `a route with \`${answer}\` and is ignored: Envoy answers it without forwarding`;
  for (const key of keys) {
    if (!saysNothing(raw[key])) reader.warn(`${path}.${key}`, `does not apply to ${why}; remove ${key}`);
  }
}

function saysNothing(value: unknown): boolean {
  return (
    value === undefined ||
    value === null ||
    value === false ||
    (Array.isArray(value) && value.length === 0) ||
    (isPlainObject(value) && Object.keys(value).length === 0)
  );
}

import type { RouteSettings } from './types.js';
import { LB_POLICIES } from './types.js';
import { dropUndefined, parseHealthCheck } from './parse-health-check.js';
import { parseOutlierDetection } from './parse-outlier-detection.js';
import { parseFrom, parseTo } from './parse-url.js';
import { ROUTE_KEYS } from './route-option-table.js';
import { closestKey, isPlainObject, type Reader } from './value-readers.js';

/** Reads a file's text; injected so parsing stays testable and the watcher knows what was read. */
export type ReadText = (path: string) => string;

/**
 * Validates one route (`routes[i]`) into RouteSettings, recording every problem with its key path.
 * Returns undefined when the route has problems; the caller rejects the whole config then.
 */
export function parseRoute(reader: Reader, path: string, raw: unknown, readText: ReadText): RouteSettings | undefined {
  if (!isPlainObject(raw)) return reader.problem(path, 'expected a route map with at least `from` and `to`');
  const before = reader.problems.length;
  for (const key of Object.keys(raw)) {
    if (!ROUTE_KEYS.includes(key)) {
      const hint = closestKey(key, ROUTE_KEYS);
      reader.warn(`${path}.${key}`, `unknown route option, ignored${hint === undefined ? '' : ` (did you mean ${hint}?)`}`);
    }
  }
  const at = (key: string): string => `${path}.${key}`;
  const str = (key: string): string | undefined => (raw[key] === undefined ? undefined : reader.string(at(key), raw[key]));
  const bool = (key: string): boolean => (raw[key] === undefined ? false : (reader.bool(at(key), raw[key]) ?? false));
  const duration = (key: string): number | undefined =>
    raw[key] === undefined ? undefined : reader.duration(at(key), raw[key]);

  const from = raw.from === undefined ? reader.problem(at('from'), 'is required') : parseFrom(reader, at('from'), raw.from);
  const to = raw.to === undefined ? reader.problem(at('to'), 'is required') : parseTo(reader, at('to'), raw.to);
  const matchers = checkMatchers(reader, path, str('prefix'), str('path'), str('regex'));
  const rewrites = checkRewrites(reader, path, str('prefix_rewrite'), str('regex_rewrite_pattern'), str('regex_rewrite_substitution'));
  const setRequestHeaders = raw.set_request_headers === undefined ? {} : (reader.stringMap(at('set_request_headers'), raw.set_request_headers) ?? {});
  const hostRewrite = checkHostRewrite(reader, path, str('host_rewrite'), setRequestHeaders, bool('preserve_host_header'));
  const lbPolicy = raw.load_balancing_policy === undefined ? 'ROUND_ROBIN' : reader.oneOf(at('load_balancing_policy'), raw.load_balancing_policy, LB_POLICIES);
  const healthChecks = raw.health_checks === undefined ? [] : Array.isArray(raw.health_checks)
    ? raw.health_checks.map((check, index) => parseHealthCheck(reader, `${at('health_checks')}[${index}]`, check))
    : [reader.problem(at('health_checks'), 'expected a list of health checks')];
  const outlier = raw.outlier_detection === undefined ? undefined : parseOutlierDetection(reader, at('outlier_detection'), raw.outlier_detection);
  const tls = readUpstreamTls(reader, path, raw, readText);

  const route = dropUndefined({
    from,
    to,
    name: str('name'),
    ...matchers,
    ...rewrites,
    load_balancing_policy: lbPolicy,
    health_checks: healthChecks,
    outlier_detection: outlier,
    healthy_panic_threshold: raw.healthy_panic_threshold === undefined ? undefined : reader.integer(at('healthy_panic_threshold'), raw.healthy_panic_threshold, 0, 100),
    timeout_ms: duration('timeout'),
    idle_timeout_ms: duration('idle_timeout'),
    allow_websockets: bool('allow_websockets'),
    set_request_headers: Object.fromEntries(Object.entries(setRequestHeaders).filter(([name]) => name.toLowerCase() !== 'host')),
    remove_request_headers: raw.remove_request_headers === undefined ? [] : (reader.stringList(at('remove_request_headers'), raw.remove_request_headers) ?? []),
    set_response_headers: raw.set_response_headers === undefined ? {} : (reader.stringMap(at('set_response_headers'), raw.set_response_headers) ?? {}),
    preserve_host_header: bool('preserve_host_header'),
    host_rewrite: hostRewrite,
    tls_skip_verify: bool('tls_skip_verify'),
    tls_server_name: str('tls_server_name'),
    ...tls,
    allow_public_unauthenticated_access: bool('allow_public_unauthenticated_access'),
    source_path: path,
  });
  checkHeaderNames(reader, path, route);
  return reader.problems.length === before ? (route as unknown as RouteSettings) : undefined;
}

function checkMatchers(reader: Reader, path: string, prefix?: string, exact?: string, regex?: string): Record<string, string | undefined> {
  const set = [prefix, exact, regex].filter((value) => value !== undefined).length;
  if (set > 1) reader.problem(path, 'set only one of prefix, path and regex');
  if (prefix !== undefined && !prefix.startsWith('/')) reader.problem(`${path}.prefix`, `must start with "/", got "${prefix}"`);
  if (exact !== undefined && !exact.startsWith('/')) reader.problem(`${path}.path`, `must start with "/", got "${exact}"`);
  if (regex !== undefined) checkRegex(reader, `${path}.regex`, regex);
  return { prefix, path: exact, regex };
}

function checkRewrites(reader: Reader, path: string, prefixRewrite?: string, pattern?: string, substitution?: string): Record<string, string | undefined> {
  if (prefixRewrite !== undefined && pattern !== undefined) {
    reader.problem(path, 'only prefix_rewrite or regex_rewrite_pattern can be specified, but not both');
  }
  if (pattern !== undefined) {
    checkRegex(reader, `${path}.regex_rewrite_pattern`, pattern);
    if (substitution === undefined) reader.problem(`${path}.regex_rewrite_substitution`, 'is required with regex_rewrite_pattern');
  } else if (substitution !== undefined) {
    reader.problem(`${path}.regex_rewrite_pattern`, 'is required with regex_rewrite_substitution');
  }
  return { prefix_rewrite: prefixRewrite, regex_rewrite_pattern: pattern, regex_rewrite_substitution: substitution };
}

/**
 * Checks a regex compiles and stays within RE2, the engine Envoy uses: no lookaround and no
 * backreferences. JavaScript's engine is a close proxy for the rest of the syntax.
 */
export function checkRegex(reader: Reader, path: string, pattern: string): void {
  if (/\(\?<?[=!]/.test(pattern) || /\\[1-9]/.test(pattern)) {
    reader.problem(path, `"${pattern}" uses lookaround or a backreference, which Envoy's RE2 engine does not support`);
    return;
  }
  try {
    new RegExp(pattern, 'u');
  } catch (err) {
    reader.problem(path, `"${pattern}" is not a valid regular expression: ${(err as Error).message}`);
  }
}

function checkHostRewrite(reader: Reader, path: string, hostRewrite: string | undefined, setHeaders: Record<string, string>, preserve: boolean): string | undefined {
  const hostHeader = Object.entries(setHeaders).find(([name]) => name.toLowerCase() === 'host')?.[1];
  const sources = [hostRewrite !== undefined, hostHeader !== undefined, preserve].filter(Boolean).length;
  if (sources > 1) reader.problem(path, 'set only one of host_rewrite, set_request_headers.Host and preserve_host_header');
  return hostRewrite ?? hostHeader;
}

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function checkHeaderNames(reader: Reader, path: string, route: Record<string, unknown>): void {
  for (const key of ['set_request_headers', 'set_response_headers']) {
    for (const [name, value] of Object.entries(route[key] as Record<string, string>)) {
      if (!HEADER_NAME.test(name)) reader.problem(`${path}.${key}.${name}`, 'is not a valid header name');
      if (/[\r\n\0]/.test(value)) reader.problem(`${path}.${key}.${name}`, 'value must not contain CR, LF or NUL');
    }
  }
  for (const [index, name] of (route.remove_request_headers as string[]).entries()) {
    if (!HEADER_NAME.test(name)) reader.problem(`${path}.remove_request_headers[${index}]`, `"${name}" is not a valid header name`);
  }
}

function readUpstreamTls(reader: Reader, path: string, raw: Record<string, unknown>, readText: ReadText): Record<string, string | undefined> {
  const pem = (inlineKey: string, fileKey: string): string | undefined => {
    if (raw[inlineKey] !== undefined && raw[fileKey] !== undefined) {
      return reader.problem(path, `set only one of ${inlineKey} and ${fileKey}`);
    }
    if (raw[inlineKey] !== undefined) return decodeBase64Pem(reader, `${path}.${inlineKey}`, raw[inlineKey]);
    if (raw[fileKey] === undefined) return undefined;
    const file = reader.string(`${path}.${fileKey}`, raw[fileKey]);
    if (file === undefined) return undefined;
    try {
      return requirePem(reader, `${path}.${fileKey}`, readText(file));
    } catch (err) {
      return reader.problem(`${path}.${fileKey}`, `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  };
  const ca = pem('tls_custom_ca', 'tls_custom_ca_file');
  const cert = pem('tls_client_cert', 'tls_client_cert_file');
  const key = pem('tls_client_key', 'tls_client_key_file');
  if ((cert === undefined) !== (key === undefined)) {
    reader.problem(path, 'client certificate key and cert both must be non-empty (tls_client_cert and tls_client_key, or their _file forms)');
  }
  return { tls_custom_ca_pem: ca, tls_client_cert_pem: cert, tls_client_key_pem: key };
}

function decodeBase64Pem(reader: Reader, path: string, raw: unknown): string | undefined {
  const text = reader.string(path, raw);
  if (text === undefined) return undefined;
  if (!/^[A-Za-z0-9+/=\s]+$/.test(text)) return reader.problem(path, 'expected base64-encoded PEM');
  return requirePem(reader, path, Buffer.from(text, 'base64').toString('utf8'));
}

function requirePem(reader: Reader, path: string, text: string): string | undefined {
  return /-----BEGIN [A-Z ]+-----/.test(text) ? text : reader.problem(path, 'does not contain a PEM block (-----BEGIN ...-----)');
}

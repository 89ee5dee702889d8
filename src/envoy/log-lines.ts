import { ACCESS_LOG_MARKER } from '../contract/access-log.js';

/** Envoy log levels accepted by `--log-level`. */
export const ENVOY_LOG_LEVELS = ['trace', 'debug', 'info', 'warning', 'error', 'critical', 'off'] as const;
export type EnvoyLogLevel = (typeof ENVOY_LOG_LEVELS)[number];

/**
 * The `--log-format` the supervisor passes: level, logger name and message separated by `|`,
 * with `--log-format-escaped` so a multi-line message stays on one line. A fixed, minimal format
 * lets `parseEnvoyLogLine` recover the level instead of guessing from free text.
 */
export const ENVOY_LOG_FORMAT = '%l|%n|%v';

/**
 * Envoy loggers whose debug lines carry secrets: request and response headers (`http`, `http2`,
 * `router`, `client` for Envoy's own gRPC calls), Check requests (`ext_authz`, `grpc`), received
 * config (`config`, `secret`), tokens and cookies (`jwt`, `lua`, `oauth2`,
 * `credential_injector`), `connection`, whose traces can print buffered data, and `rbac`, whose
 * "checking request" line prints every header and the dynamic metadata (the fast path's verified
 * decision token, its assertion included). Each was seen (or, for `lua`, `oauth2`,
 * `credential_injector` and `connection`, can be expected) to print an `authorization` or `cookie`
 * value, a token or a callback path at debug.
 */
export const SENSITIVE_ENVOY_COMPONENTS = [
  'http',
  'http2',
  'router',
  'client',
  'connection',
  'ext_authz',
  'grpc',
  'config',
  'secret',
  'jwt',
  'lua',
  'oauth2',
  'credential_injector',
  'rbac',
] as const;

/**
 * The `name:info,...` list (Envoy's `--component-log-level` and admin `/logging?paths=` form)
 * that keeps `SENSITIVE_ENVOY_COMPONENTS` at info when `level` is more verbose (debug, trace);
 * undefined when `level` is info or quieter, so nothing needs capping.
 */
export function sensitiveComponentCaps(level: EnvoyLogLevel): string | undefined {
  if (level !== 'debug' && level !== 'trace') return undefined;
  return SENSITIVE_ENVOY_COMPONENTS.map((name) => `${name}:info`).join(',');
}

/** One Envoy log line mapped onto our logger's levels. */
export interface EnvoyLogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  /** Envoy's logger name (`main`, `config`, `upstream`, ...); undefined for raw output. */
  readonly component: string | undefined;
  readonly message: string;
}

const LEVEL_MAP: Readonly<Record<string, EnvoyLogLine['level']>> = {
  trace: 'debug',
  debug: 'debug',
  info: 'info',
  warning: 'warn',
  warn: 'warn',
  error: 'error',
  critical: 'error',
};

/**
 * Parses one line of Envoy output written with `ENVOY_LOG_FORMAT`. Anything else (a crash
 * backtrace, output from `--version`, a user-supplied format) is kept whole as a raw line:
 * `warn` when it came from stderr, `info` from stdout. Never throws, whatever the input.
 */
export function parseEnvoyLogLine(line: string, stream: 'stdout' | 'stderr'): EnvoyLogLine {
  const first = line.indexOf('|');
  const second = first < 0 ? -1 : line.indexOf('|', first + 1);
  if (second > 0) {
    const level = LEVEL_MAP[line.slice(0, first)];
    const component = line.slice(first + 1, second);
    if (level !== undefined && /^[\w.-]+$/.test(component)) {
      return { level, component, message: line.slice(second + 1) };
    }
  }
  return { level: stream === 'stderr' ? 'warn' : 'info', component: undefined, message: line };
}

/** One request from Envoy's access log: the format's keys (compile/access-log.ts) with a value. */
export type AccessLogRecord = Readonly<Record<string, string | number | boolean>>;

/**
 * Reads one line of Envoy's stdout as an access-log record: a JSON object carrying
 * `ACCESS_LOG_MARKER`. Returns its fields without the marker and without the keys Envoy had no
 * value for (`null`, or `-` as `%RESPONSE_FLAGS%` writes "none"), so a log record holds only what
 * is known. Anything else (not JSON, another object, a raw line) is undefined: the caller logs it
 * as Envoy output. Never throws.
 */
export function parseAccessLogLine(line: string): AccessLogRecord | undefined {
  if (!line.startsWith('{')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  const object = parsed as Record<string, unknown>;
  if (object[ACCESS_LOG_MARKER.key] !== ACCESS_LOG_MARKER.value) return undefined;
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(object)) {
    if (key === ACCESS_LOG_MARKER.key || value === '-') continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      out[key] = value;
  }
  return out;
}

/**
 * Envoy's level for a Portcullis `log_level`, used when `proxy_log_level` is unset: the same
 * verbosity under Envoy's names (`warn` is `warning`, `fatal` is `critical`, `silent` is `off`).
 */
export function envoyLevelFor(level: string): EnvoyLogLevel {
  const mapped = { warn: 'warning', fatal: 'critical', silent: 'off' }[level] ?? level;
  return (ENVOY_LOG_LEVELS as readonly string[]).includes(mapped) ? (mapped as EnvoyLogLevel) : 'info';
}

/** Envoy log levels accepted by `--log-level`. */
export const ENVOY_LOG_LEVELS = ['trace', 'debug', 'info', 'warning', 'error', 'critical', 'off'] as const;
export type EnvoyLogLevel = (typeof ENVOY_LOG_LEVELS)[number];

/**
 * The `--log-format` the supervisor passes: level, logger name and message separated by `|`,
 * with `--log-format-escaped` so a multi-line message stays on one line. A fixed, minimal format
 * lets `parseEnvoyLogLine` recover the level instead of guessing from free text.
 */
export const ENVOY_LOG_FORMAT = '%l|%n|%v';

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

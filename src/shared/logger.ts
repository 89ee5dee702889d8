import { type DestinationStream, pino } from 'pino';

/**
 * The logger interface every module takes by injection: the subset of pino we use, so tests can
 * pass a recording fake and production passes pino itself.
 */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

/** Log levels accepted by `log_level`, in increasing severity. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Creates the process logger: JSON lines on stdout through pino, without pid or hostname (the
 * runtime binds `service` once the config says which services run), or lines for a person when
 * `destination` is `terminalDestination()`. Its `level` is settable, and every child logger follows
 * it (a reload's `log_level`). Secrets never reach it because callers log config through
 * `redactConfig`, and pino's `redact` drops the common secret paths too.
 */
export function createLogger(
  level: LogLevel = 'info',
  destination?: DestinationStream,
): Logger & { level: string } {
  const options = {
    level,
    base: null,
    redact: {
      paths: ['*.shared_secret', '*.cookie_secret', '*.idp_client_secret', '*.signing_key', '*.password'],
      censor: '[redacted]',
    },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}

/**
 * A pino destination for a person at a terminal (pino-pretty): one coloured line per record with
 * the time, level, message and the record's fields inline, writing synchronously to stdout so
 * nothing is lost when the process exits. The `service` label and Envoy's pid are left out (they
 * are for machines). Loaded on demand, so a service (stdout not a TTY) never loads pino-pretty
 * and logs JSON.
 */
export async function terminalDestination(): Promise<DestinationStream> {
  const { default: pretty } = await import('pino-pretty');
  return pretty({
    colorize: true,
    singleLine: true,
    sync: true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'service,pid',
  });
}

/** A logger that discards everything; for tests and benchmarks that do not inspect logs. */
export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  child: () => silentLogger,
};

/** One recorded log call, as captured by `recordingLogger`. */
export interface LogRecord {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: object;
  msg: string | undefined;
}

/** A logger that keeps every call in `records`, so tests can assert what was logged. */
export function recordingLogger(): Logger & { records: LogRecord[] } {
  const records: LogRecord[] = [];
  const make = (): Logger => ({
    debug: (obj, msg) => void records.push({ level: 'debug', obj, msg }),
    info: (obj, msg) => void records.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => void records.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => void records.push({ level: 'error', obj, msg }),
    child: () => make(),
  });
  return Object.assign(make(), { records });
}

import type { Config } from '../config/types.js';

/** `log_level`s at which a request is logged (pomerium-behaviour.md 3.5: trace, debug and info). */
const LOGGED_LEVELS: ReadonlySet<Config['log_level']> = new Set(['trace', 'debug', 'info']);

/**
 * Config -> whether Envoy writes an access-log line per request, as a spread for the IR listener:
 * `{ accessLog: true }` when `log_level` is trace, debug or info (the record is logged at info),
 * `{}` at warn and above, where every line would be written, read and dropped. A reload that
 * crosses the line changes the listener, and Envoy starts or stops logging. Pure.
 */
export function translateAccessLog(config: Pick<Config, 'log_level'>): { accessLog?: true } {
  return LOGGED_LEVELS.has(config.log_level) ? { accessLog: true } : {};
}

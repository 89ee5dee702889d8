import type { IRObservability } from '../ir/services.js';
import { envoyLevelFor, type EnvoyLogLevel } from '../envoy/log-lines.js';
import { errorMessage } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import type { BuildSubscriber } from '../runtime/subscribers.js';

/** The process logger's settable level (pino's `level`; its children follow it); absent on test fakes. */
export interface LevelledLogger {
  level?: string;
}

/** Envoy's level as the supervisor holds it (`EnvoySupervisor.logLevel` and `setLogLevel`). */
export interface EnvoyLevel {
  readonly logLevel: EnvoyLogLevel;
  readonly capsSensitiveComponents: boolean;
  setLogLevel(level: EnvoyLogLevel, capSensitive: boolean): Promise<void>;
}

/**
 * Envoy's log level for a config: `proxy_log_level`, or when unset `log_level` under Envoy's
 * names (pomerium-behaviour.md 3.5: proxy_log_level falls back to log_level), with one exception:
 * `info` runs Envoy at `warning`. Envoy's info level starts with several hundred lines (its whole
 * extension list, header maps, runtime layers) that would bury Portcullis's own start-up lines;
 * `proxy_log_level: info` asks for them explicitly. Pure.
 */
export function envoyLogLevel(levels: Pick<IRObservability, 'logLevel' | 'proxyLogLevel'>): EnvoyLogLevel {
  if (levels.proxyLogLevel !== undefined) return envoyLevelFor(levels.proxyLogLevel);
  return levels.logLevel === 'info' ? 'warning' : envoyLevelFor(levels.logLevel);
}

/**
 * The subscriber that applies each accepted config's log levels: `log_level` to the process
 * logger (every child logger follows pino's root level) and, when this process supervises Envoy,
 * Envoy's level through its admin API (`envoy.setLogLevel`). A change is logged once at info, after
 * it applies (so lowering to debug is visible and raising to warn is quiet). Setting Envoy's level
 * is asynchronous and never fails the build: a refused admin call is logged as a warning (the
 * supervisor still starts a restarted Envoy at the new level).
 */
export function logLevelSubscriber(
  root: LevelledLogger,
  envoy: EnvoyLevel | undefined,
  log: Logger,
): BuildSubscriber {
  return {
    name: 'log-levels',
    publish: ({ ir }) => {
      const levels = ir.observability;
      if (root.level !== undefined && root.level !== levels.logLevel) {
        const from = root.level;
        root.level = levels.logLevel;
        log.info({ from, to: levels.logLevel }, 'log_level changed');
      }
      const level = envoyLogLevel(levels);
      // Envoy's secret-bearing loggers stay at info unless proxy_log_level asks.
      const caps = levels.proxyLogLevel === undefined;
      if (envoy === undefined || (envoy.logLevel === level && envoy.capsSensitiveComponents === caps)) return;
      const from = envoy.logLevel;
      envoy.setLogLevel(level, caps).then(
        () => log.info({ from, to: level }, "Envoy's log level changed"),
        (err: unknown) =>
          log.warn({ err: errorMessage(err), level }, "Envoy's log level could not be changed"),
      );
    },
  };
}

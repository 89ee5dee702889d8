import { format } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { LOG_SECRET_NAMES } from '../contract/log-secrets.js';
import type { Logger } from '../shared/logger.js';
import { redactor } from '../shared/redact.js';

/**
 * Sends grpc-js's own log lines through `logger` (component `grpc-js`), redacted
 * (shared/redact.ts), instead of grpc-js's default `console.error`: grpc-js prints an invalid
 * metadata entry whole, value included, so one stray character in a credential would write it to
 * stderr outside the logger. Verbosity follows `logLevel`: grpc-js's info lines
 * at debug and trace, its errors otherwise. grpc-js keeps one logger per process, so this sets
 * process-wide state by necessity; the composition root calls it at start, the last call wins.
 */
export function routeGrpcLogging(logger: Logger, logLevel: string): void {
  const log = logger.child({ component: 'grpc-js' });
  const redact = redactor(LOG_SECRET_NAMES);
  const line = (args: unknown[]): string => redact(format(...args));
  grpc.setLogger({
    error: (...args: unknown[]) => log.warn({}, line(args)),
    info: (...args: unknown[]) => log.info({}, line(args)),
    debug: (...args: unknown[]) => log.debug({}, line(args)),
  });
  const verbose = logLevel === 'debug' || logLevel === 'trace';
  grpc.setLogVerbosity(verbose ? grpc.logVerbosity.INFO : grpc.logVerbosity.ERROR);
}

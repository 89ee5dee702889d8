import { errorMessage } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';

/**
 * What a serving command does on signals: SIGTERM and SIGINT stop it once, gracefully (5 s), and
 * exit 0 (1 when stopping failed); SIGHUP reloads. One place, so every mode stops the same way.
 */
export function handleSignals(
  log: Logger,
  how: { readonly stopping: string; stop(graceMs: number): Promise<void>; reload(): void },
): void {
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, how.stopping);
    how.stop(5000).then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ error: errorMessage(err) }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGHUP', () => how.reload());
}

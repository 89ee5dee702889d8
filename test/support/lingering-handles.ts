/**
 * A guard for a test file whose process must end once its tests are done: `after` every test, it
 * gives leftover sockets and timers `graceMs` to close, then, if the process is still alive, names
 * what keeps it alive (process.getActiveResourcesInfo) on stderr and exits 1. Without it a leaked
 * client (a reconnecting Redis connection, say) hangs the file until the runner's 300 s timeout
 * with nothing said about why.
 */
import { after } from 'node:test';

/** Registers the guard (see the module comment); call it at the top level of a test file. */
export function failOnLingeringHandles(what: string, graceMs = 10_000): void {
  after(() => {
    const timer = setTimeout(() => {
      const active = process.getActiveResourcesInfo().filter((kind) => kind !== 'TTYWrap');
      process.stderr.write(
        `${what}: every test finished ${graceMs} ms ago but the process is still alive, held by ${JSON.stringify(active)}; a client or server was not closed\n`,
      );
      process.exit(1);
    }, graceMs);
    // Unref'd: it never keeps the process alive itself, and fires only if something else does.
    timer.unref();
  });
}

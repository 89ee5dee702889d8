/**
 * Accepts the Go-style single-dash long flags operators know from Pomerium (`-config f`,
 * `-config=f`) by rewriting them to `--config` before yargs sees them.
 */
export function normaliseArgv(argv: readonly string[]): string[] {
  return argv.map((arg) => (/^-config(=|$)/.test(arg) ? `-${arg}` : arg));
}

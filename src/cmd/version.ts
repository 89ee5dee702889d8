import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * The release string `MAJOR.MINOR.PATCH+GITHASH` (spec section 9): the package version plus the
 * short commit hash of the checkout, or `+unknown` outside a git checkout.
 */
export function versionString(): string {
  const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  let hash = 'unknown';
  try {
    hash = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], {
      cwd: new URL('../..', import.meta.url).pathname,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .trim();
  } catch {
    // not a git checkout
  }
  return `${packageJson.version}+${hash}`;
}

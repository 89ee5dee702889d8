import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = new URL('../..', import.meta.url).pathname;
const HASH = /^[0-9a-f]{7,40}$/;

/**
 * The release string `MAJOR.MINOR.PATCH+GITHASH` (spec section 9): the package version plus the
 * 12-character commit hash. The hash comes from `PORTCULLIS_GIT_HASH` (set by image builds that
 * ship no .git), else `git rev-parse`, else the .git folder read directly, else `unknown`.
 */
export function versionString(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const release = /^\d+\.\d+\.\d+/.exec(packageJson.version)?.[0] ?? '0.0.0';
  return `${release}+${gitHash(env)}`;
}

function gitHash(env: Readonly<Record<string, string | undefined>>): string {
  const fromEnv = env.PORTCULLIS_GIT_HASH?.trim().toLowerCase();
  if (fromEnv !== undefined && HASH.test(fromEnv)) return fromEnv.slice(0, 12);
  try {
    const hash = execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .trim();
    if (HASH.test(hash)) return hash.slice(0, 12);
  } catch {
    // no git binary, or not a checkout: read .git below
  }
  return readGitDir() ?? 'unknown';
}

/** The HEAD commit read from .git without the git binary (loose or packed refs). */
function readGitDir(): string | undefined {
  try {
    const head = readFileSync(join(ROOT, '.git', 'HEAD'), 'utf8').trim();
    const ref = /^ref: (.+)$/.exec(head)?.[1];
    if (ref === undefined) return HASH.test(head) ? head.slice(0, 12) : undefined;
    try {
      return readFileSync(join(ROOT, '.git', ref), 'utf8')
        .trim()
        .slice(0, 12);
    } catch {
      const packed = readFileSync(join(ROOT, '.git', 'packed-refs'), 'utf8');
      return new RegExp(`^([0-9a-f]{40}) ${ref.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm')
        .exec(packed)?.[1]
        ?.slice(0, 12);
    }
  } catch {
    return undefined;
  }
}

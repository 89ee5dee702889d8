import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Bootstrap } from './bootstrap.js';

/**
 * Writes `data` to `path` so a reader sees the old file or the new one, never half of either:
 * a temp file in the same directory, then `rename`. Mode 0600 because a bootstrap may one day
 * carry secrets. The temp file is removed if anything fails.
 */
export async function writeFileAtomic(path: string, data: string): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, data, { mode: 0o600 });
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
}

/** Result of `envoy --mode validate`: whether Envoy accepted the bootstrap and what it printed. */
export interface ValidationResult {
  readonly ok: boolean;
  /** Envoy's stdout and stderr together; on failure the reason is in here. */
  readonly output: string;
}

/**
 * Asks the real Envoy binary whether it accepts `bootstrap` (`--mode validate`): this checks
 * every static resource against Envoy's own protos and extension registry, which no schema we
 * could write matches. Never throws for a rejected config; `ok` is false and `output` says why.
 * Bounded by `timeoutMs` (default 60 s).
 */
export async function validateBootstrap(
  binary: string,
  bootstrap: Bootstrap,
  options: { readonly timeoutMs?: number } = {},
): Promise<ValidationResult> {
  const dir = await mkdtemp(join(tmpdir(), 'portcullis-validate-'));
  try {
    const file = join(dir, 'bootstrap.json');
    await writeFile(file, JSON.stringify(bootstrap, null, 2));
    const args = ['--mode', 'validate', '-c', file, '--log-level', 'warning'];
    return await new Promise((resolve) => {
      execFile(binary, args, { timeout: options.timeoutMs ?? 60_000 }, (err, stdout, stderr) => {
        const output = `${stdout}${stderr}`.trim();
        resolve({ ok: err === null, output: err !== null && output === '' ? err.message : output });
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

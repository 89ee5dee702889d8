import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root, from this file's location. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** How to run one benchmark child. */
export interface ChildSpec {
  /** Script under `bench/`, e.g. `suites/compile.ts`. */
  readonly script: string;
  readonly args: readonly string[];
  /** Node flags before `--import tsx`, e.g. `--expose-gc`. */
  readonly nodeFlags?: readonly string[];
  /** Killed (SIGKILL to its process group) after this long. */
  readonly timeoutMs: number;
}

/**
 * Runs a benchmark in a fresh Node process and returns the JSON it wrote to the file named by
 * `--out`. A fresh process per measurement keeps one size's garbage, JIT state and heap growth out
 * of the next one's numbers. The child's stderr (progress lines) is passed through; a child that
 * exceeds `timeoutMs` is killed with its process group (Envoy included) and the run fails.
 */
export async function runChild<T>(spec: ChildSpec): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-bench-'));
  const out = join(dir, 'result.json');
  try {
    const child = spawn(
      process.execPath,
      [
        ...(spec.nodeFlags ?? []),
        '--import',
        'tsx',
        join(REPO_ROOT, 'bench', spec.script),
        ...spec.args,
        `--out=${out}`,
      ],
      { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'inherit'], detached: true },
    );
    const code = await new Promise<number | string>((resolve, reject) => {
      const timer = setTimeout(() => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
        reject(
          new Error(`${spec.script} ${spec.args.join(' ')} exceeded ${spec.timeoutMs} ms and was killed`),
        );
      }, spec.timeoutMs);
      child.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.on('exit', (exitCode, signal) => {
        clearTimeout(timer);
        resolve(exitCode ?? signal ?? 'unknown');
      });
    });
    if (code !== 0) throw new Error(`${spec.script} ${spec.args.join(' ')} exited with ${String(code)}`);
    return JSON.parse(readFileSync(out, 'utf8')) as T;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `--name=value` arguments of this process, as a map. */
export function parseArgs(argv: readonly string[] = process.argv.slice(2)): Map<string, string> {
  const args = new Map<string, string>();
  for (const arg of argv) {
    const match = /^--([^=]+)(?:=(.*))?$/.exec(arg);
    if (match !== null) args.set(match[1] as string, match[2] ?? 'true');
  }
  return args;
}

/** A required numeric argument. */
export function numberArg(args: Map<string, string>, name: string, fallback?: number): number {
  const raw = args.get(name);
  if (raw === undefined) {
    if (fallback !== undefined) return fallback;
    throw new Error(`missing --${name}`);
  }
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new Error(`--${name} must be a number, got ${raw}`);
  return value;
}

/** Progress line on stderr, prefixed so interleaved children stay readable. */
export function progress(tag: string, message: string): void {
  process.stderr.write(`[${tag}] ${message}\n`);
}

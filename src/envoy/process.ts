import { type ChildProcess, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ENVOY_LOG_FORMAT, type EnvoyLogLevel } from './log-lines.js';

/** Files the supervisor keeps in its work dir, by role. */
export const WORK_FILES = {
  bootstrap: 'envoy-bootstrap.json',
  adminAddress: 'admin-address',
  baseId: 'base-id',
};

/** How often Envoy flushes its access log to stdout (its `--file-flush-interval-msec`). */
export const ACCESS_LOG_FLUSH_MS = 500;

/** Inputs to `envoyCommand`. */
export interface EnvoyCommandOptions {
  readonly binary: string;
  readonly configPath: string;
  readonly workDir: string;
  readonly logLevel: EnvoyLogLevel;
  /** `--component-log-level` value (`sensitiveComponentCaps`), or undefined for none. */
  readonly componentLogLevels?: string | undefined;
  readonly concurrency: number;
  readonly hotRestart: 'dynamic-base-id' | 'disabled';
  readonly extraArgs: readonly string[];
  /** Path of a `setpriv` that supports `--pdeathsig`, or undefined to run Envoy directly. */
  readonly setpriv: string | undefined;
}

/**
 * The command line for one Envoy run, as `[executable, args]`. Envoy writes its admin address to
 * a file (so admin port 0 works), logs in `ENVOY_LOG_FORMAT` unless `extraArgs` sets its own
 * format, and flushes its access log every `ACCESS_LOG_FLUSH_MS`. With `setpriv`, Envoy is exec'd in place (same pid) with a parent-death signal, so it
 * dies with Node even when Node is SIGKILLed and no exit hook runs. Pure.
 */
export function envoyCommand(o: EnvoyCommandOptions): [string, string[]] {
  const args = ['-c', o.configPath, '--log-level', o.logLevel, '--concurrency', String(o.concurrency)];
  if (o.componentLogLevels !== undefined) args.push('--component-log-level', o.componentLogLevels);
  args.push('--admin-address-path', join(o.workDir, WORK_FILES.adminAddress));
  // The access log (stdout) is flushed this often instead of Envoy's default 10 s, so a request's
  // line follows it closely.
  args.push('--file-flush-interval-msec', String(ACCESS_LOG_FLUSH_MS));
  if (!o.extraArgs.some((a) => a === '--log-format' || a.startsWith('--log-format='))) {
    args.push('--log-format', ENVOY_LOG_FORMAT, '--log-format-escaped');
  }
  if (o.hotRestart === 'disabled') args.push('--disable-hot-restart');
  else args.push('--use-dynamic-base-id', '--base-id-path', join(o.workDir, WORK_FILES.baseId));
  args.push(...o.extraArgs);
  if (o.setpriv === undefined) return [o.binary, args];
  return [o.setpriv, ['--pdeathsig', 'SIGTERM', '--', o.binary, ...args]];
}

/**
 * Removes the /dev/shm segment an Envoy with hot restart enabled leaves behind: Envoy 1.40 does
 * not unlink it, even on a clean exit, so every run would litter /dev/shm. The name is
 * `envoy_shared_memory_<base id * 10 + restart epoch>`; we always run epoch 0. Best effort.
 */
export function removeHotRestartSegment(workDir: string): void {
  const file = join(workDir, WORK_FILES.baseId);
  let id: string;
  try {
    id = readFileSync(file, 'utf8').trim();
  } catch {
    return; // No base id written: nothing was created.
  }
  if (/^\d+$/.test(id)) void unlink(`/dev/shm/envoy_shared_memory_${id}0`).catch(() => {});
  void unlink(file).catch(() => {});
}

/** True while the child has neither exited nor been killed by a signal. */
export function isAlive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Resolves after `ms`. */
export function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** True if `promise` settles within `ms`, false otherwise; never leaves a timer behind. */
export async function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)));
  const result = await Promise.race([promise.then(() => true), timeout]);
  clearTimeout(timer);
  return result;
}

/**
 * Path of util-linux `setpriv` if it supports `--pdeathsig`; undefined off Linux or when absent.
 * Looked up at each Envoy spawn (a few milliseconds, a handful of times per run), so no state is kept.
 */
export function setprivPath(): string | undefined {
  const path = ['/usr/bin/setpriv', '/bin/setpriv'].find(
    (p) => process.platform === 'linux' && existsSync(p),
  );
  if (path === undefined) return undefined;
  try {
    const help = execFileSync(path, ['--help'], { timeout: 2000, encoding: 'utf8' });
    return help.includes('--pdeathsig') ? path : undefined;
  } catch {
    return undefined; // Too old or broken: run Envoy directly.
  }
}

import { fork, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';

/** How to start one measured process. */
export interface ProcessSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** Its stdout and stderr are appended here (read back by `logTail` when something fails). */
  readonly logFile: string;
  /** When set, stdout goes here instead (e.g. a command whose output is the result). */
  readonly stdoutFile?: string;
  /** Killed, with its process group, after this long. */
  readonly timeoutMs: number;
}

/** A started process (leader of its own process group, so its Envoy is found and killed with it). */
export interface Started {
  readonly child: ChildProcess;
  /** Where its output goes. */
  readonly logFile: string;
  /** Resolves with the exit code (or signal name) when the process exits. */
  readonly exited: Promise<number | string>;
  /** SIGTERM, then after `graceMs` SIGKILL to the whole group; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Every process group the benchmark started and has not yet seen exit. The run owns one and kills
 * what is left when it is interrupted, since detached children do not get the terminal's signal.
 */
export class ProcessGroups {
  private readonly live = new Set<number>();

  /** Starts `spec` detached (its own process group), output to its log file, bounded in time. */
  start(spec: ProcessSpec): Started {
    const log = openSync(spec.logFile, 'a');
    const out = spec.stdoutFile === undefined ? log : openSync(spec.stdoutFile, 'w');
    const child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: ['ignore', out, log],
    });
    closeSync(log);
    if (out !== log) closeSync(out);
    return this.track(child, spec.logFile, spec.timeoutMs);
  }

  /**
   * Forks the TypeScript module `script` (through tsx, with `--expose-gc`) detached, with an IPC
   * channel, output to `logFile`, bounded in time.
   */
  fork(script: string, args: readonly string[], cwd: string, logFile: string, timeoutMs: number): Started {
    const log = openSync(logFile, 'a');
    const child = fork(script, args, {
      cwd,
      execArgv: ['--expose-gc', '--import', 'tsx'],
      detached: true,
      stdio: ['ignore', log, log, 'ipc'],
    });
    closeSync(log);
    return this.track(child, logFile, timeoutMs);
  }

  /** SIGKILLs every group still running (an interrupted run). */
  killAll(): void {
    for (const pid of this.live) killGroup(pid);
    this.live.clear();
  }

  private track(child: ChildProcess, logFile: string, timeoutMs: number): Started {
    const pid = child.pid;
    if (pid === undefined) throw new Error('process did not start');
    this.live.add(pid);
    const exited = new Promise<number | string>((resolve) => {
      child.once('exit', (code, signal) => {
        resolve(code ?? signal ?? 'unknown');
      });
    });
    const deadline = setTimeout(() => killGroup(pid), timeoutMs);
    deadline.unref();
    void exited.then(() => {
      clearTimeout(deadline);
      // Its children (Envoy) may outlive a killed leader: the group goes too.
      killGroup(pid);
      this.live.delete(pid);
    });
    return {
      child,
      logFile,
      exited,
      stop: async (graceMs = 10_000) => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        const timer = setTimeout(() => killGroup(pid), graceMs);
        await exited;
        clearTimeout(timer);
      },
    };
  }
}

/** SIGKILL to process group `pid`; a group that is already gone is fine. */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * `work`, unless `process` exits first: then rejects with its exit code and the end of its log, so
 * a crash shows as itself rather than as a timeout.
 */
export function whileRunning<T>(process: Started, work: Promise<T>): Promise<T> {
  return Promise.race([
    work,
    process.exited.then((code): never => {
      throw new Error(`the process exited with ${code}:\n${logTail(process.logFile)}`);
    }),
  ]);
}

/** The last `lines` lines of a log file, for error messages. */
export function logTail(logFile: string, lines = 15): string {
  try {
    return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Polls `probe` every `intervalMs` until it returns true; rejects after `timeoutMs` naming `what`. */
export async function until(
  probe: () => Promise<boolean> | boolean,
  what: string,
  options: { readonly intervalMs?: number; readonly timeoutMs: number },
): Promise<void> {
  const deadline = performance.now() + options.timeoutMs;
  for (;;) {
    if (
      await Promise.resolve()
        .then(probe)
        .catch(() => false)
    )
      return;
    if (performance.now() > deadline)
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50));
  }
}

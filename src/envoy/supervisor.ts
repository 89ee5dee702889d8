import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { PortcullisError, errorMessage } from '../shared/errors.js';
import { type Logger, silentLogger } from '../shared/logger.js';
import { adminRequest, adminUrlFromAddress, drainEnvoy, type EnvoyServerState } from './admin.js';
import { writeFileAtomic } from './files.js';
import {
  type EnvoyLogLevel,
  parseAccessLogLine,
  parseEnvoyLogLine,
  sensitiveComponentCaps,
} from './log-lines.js';
import { redactor } from '../shared/redact.js';
import { LOG_SECRET_NAMES } from '../contract/log-secrets.js';
import {
  WORK_FILES,
  delay,
  envoyCommand,
  isAlive,
  removeHotRestartSegment,
  setprivPath,
  settlesWithin,
} from './process.js';
import type {
  EnvoySupervisorOptions,
  ExitInfo,
  RestartPolicy,
  SupervisorEvents,
  SupervisorState,
} from './supervisor-types.js';

export { validateBootstrap, type ValidationResult } from './files.js';
export type * from './supervisor-types.js';

/**
 * Runs one Envoy child for the all-in-one mode and keeps it running: restarts it with
 * exponential backoff when it dies, forwards its log lines into our logger (each access-log line
 * once, as a `request` record), sets its log level at run time (`setLogLevel`), drains it on
 * `stop()`, and never leaves it orphaned (SIGKILL from a process `exit` hook, and on Linux a
 * parent-death signal through `setpriv` for when Node itself is killed). Everything Envoy serves
 * arrives over ADS; the supervisor only knows the bootstrap.
 */
export class EnvoySupervisor extends EventEmitter<SupervisorEvents> {
  readonly #opts: EnvoySupervisorOptions;
  readonly #log: Logger;
  readonly #policy: Required<RestartPolicy> | false;
  #state: SupervisorState = 'idle';
  #workDir: string | undefined;
  #ownsWorkDir = false;
  #configPath: string | undefined;
  #child: ChildProcess | undefined;
  #adminUrl: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #delayMs = 0;
  #restarts = 0;
  #lastExit: ExitInfo | undefined;
  #stopRequested = false;
  #logLevel: EnvoyLogLevel;
  #capSensitive: boolean;
  #redact = redactor(LOG_SECRET_NAMES);
  /** The config's header names masked beside LOG_SECRET_NAMES (see `redactHeaders`). */
  #extraHeaders: readonly string[] = [];
  readonly #killOnExit = (): void => {
    if (this.#child !== undefined && isAlive(this.#child)) this.#child.kill('SIGKILL');
  };

  constructor(options: EnvoySupervisorOptions) {
    super();
    this.#opts = options;
    this.#log = (options.logger ?? silentLogger).child({ component: 'envoy' });
    this.#logLevel = options.logLevel ?? 'warning';
    this.#capSensitive = options.capSensitiveComponents ?? true;
    const r = options.restart;
    this.#policy =
      r === false
        ? false
        : {
            initialDelayMs: r?.initialDelayMs ?? 250,
            maxDelayMs: r?.maxDelayMs ?? 30_000,
            resetAfterMs: r?.resetAfterMs ?? 60_000,
          };
    const c = options.concurrency ?? 2;
    if (!Number.isInteger(c) || c < 1)
      throw new PortcullisError('ENVOY_OPTIONS_INVALID', `concurrency ${c} must be >= 1`);
  }

  /** Current lifecycle state. */
  get state(): SupervisorState {
    return this.#state;
  }

  /** PID of the running Envoy, if any. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** How many times the child has been restarted after unexpected exits. */
  get restarts(): number {
    return this.#restarts;
  }

  /**
   * Base URL of the running Envoy's admin interface (`http://127.0.0.1:PORT`), read from the file
   * Envoy writes once admin listens; undefined before that and while no Envoy runs. It can change
   * across restarts when the bootstrap asks for port 0.
   */
  get adminUrl(): string | undefined {
    if (this.#adminUrl === undefined && this.#child !== undefined && this.#workDir !== undefined) {
      try {
        this.#adminUrl = adminUrlFromAddress(
          readFileSync(join(this.#workDir, WORK_FILES.adminAddress), 'utf8'),
        );
      } catch {
        // Not written yet.
      }
    }
    return this.#adminUrl;
  }

  /** Envoy's log level: the one a (re)started Envoy gets, and the running one's once set. */
  get logLevel(): EnvoyLogLevel {
    return this.#logLevel;
  }

  /**
   * Masks the values of `names` too (lower case) in every Envoy line forwarded from now on: the
   * request headers a config fills with the session's tokens (set_request_headers templates),
   * which Envoy's router prints at debug like any header. Rebuilds the redactor only on a change.
   */
  redactHeaders(names: readonly string[]): void {
    const sorted = [...new Set(names)].sort();
    if (sorted.length === this.#extraHeaders.length && sorted.every((n, i) => n === this.#extraHeaders[i]))
      return;
    this.#extraHeaders = sorted;
    this.#redact = redactor({ ...LOG_SECRET_NAMES, headers: [...LOG_SECRET_NAMES.headers, ...sorted] });
  }

  /** Whether secret-bearing loggers are kept at info at debug and trace (`capSensitiveComponents`). */
  get capsSensitiveComponents(): boolean {
    return this.#capSensitive;
  }

  /**
   * Sets Envoy's log level: the running Envoy's at once, through admin `POST /logging?level=`
   * (every logger), then `POST /logging?paths=` to keep the secret-bearing loggers at info
   * (`capSensitive`, default true), and the command line of every later restart. Rejects with
   * `ENVOY_LOG_LEVEL_FAILED` when a running Envoy's admin refuses or is not reachable (the level
   * still applies to the next restart); with no Envoy running it only records the level.
   */
  async setLogLevel(level: EnvoyLogLevel, capSensitive = true): Promise<void> {
    this.#logLevel = level;
    this.#capSensitive = capSensitive;
    const url = this.adminUrl;
    if (url === undefined) return;
    const caps = capSensitive ? sensitiveComponentCaps(level) : undefined;
    for (const query of [`level=${level}`, ...(caps === undefined ? [] : [`paths=${caps}`])]) {
      let status: number;
      try {
        status = (await adminRequest(url, `/logging?${query}`, { method: 'POST' })).status;
      } catch (err) {
        throw new PortcullisError(
          'ENVOY_LOG_LEVEL_FAILED',
          `cannot set Envoy's log level: ${errorMessage(err)}`,
        );
      }
      if (status !== 200)
        throw new PortcullisError(
          'ENVOY_LOG_LEVEL_FAILED',
          `Envoy admin answered ${status} to POST /logging`,
        );
    }
  }

  /**
   * Writes the bootstrap and spawns Envoy. Resolves once the process exists (not when it is
   * ready: see `waitReady`). Rejects with `ENVOY_START_FAILED` if it cannot be spawned at all.
   */
  async start(): Promise<void> {
    if (this.#state !== 'idle' && this.#state !== 'stopped') {
      throw new PortcullisError('ENVOY_ALREADY_STARTED', `Envoy supervisor is ${this.#state}`);
    }
    this.#stopRequested = false;
    await this.#prepare();
    if (this.#stopRequested) return; // stop() was called while the bootstrap was being written.
    this.#delayMs = this.#policy === false ? 0 : this.#policy.initialDelayMs;
    process.on('exit', this.#killOnExit);
    await this.#spawn(true);
  }

  /**
   * Polls admin `/ready` until Envoy reports one of `accept` (default `LIVE`) and returns that
   * state. Without an ADS answer Envoy stays PRE_INITIALIZING/INITIALIZING until its initial
   * fetch timeouts pass, so pass those states to wait only for admin. Rejects with
   * `ENVOY_NOT_READY` after `timeoutMs`, saying the last answer and the last exit.
   */
  async waitReady(
    timeoutMs = 30_000,
    accept: readonly EnvoyServerState[] = ['LIVE'],
  ): Promise<EnvoyServerState> {
    const deadline = Date.now() + timeoutMs;
    let last = 'admin address not written yet';
    for (;;) {
      const url = this.adminUrl;
      if (url !== undefined) {
        try {
          const state = (await adminRequest(url, '/ready', { timeoutMs: 1000 })).body.trim();
          if ((accept as readonly string[]).includes(state)) return state as EnvoyServerState;
          last = `state ${state}`;
        } catch (err) {
          last = errorMessage(err);
        }
      }
      if (this.#state === 'stopped' || Date.now() >= deadline) break;
      await delay(Math.min(100, Math.max(0, deadline - Date.now())));
    }
    const exit =
      this.#lastExit === undefined
        ? ''
        : `; last exit: code ${this.#lastExit.code}, signal ${this.#lastExit.signal}`;
    throw new PortcullisError(
      'ENVOY_NOT_READY',
      `Envoy not ${accept.join('/')} after ${timeoutMs} ms (supervisor ${this.#state}): ${last}; restarts ${this.#restarts}${exit}`,
    );
  }

  /**
   * Stops Envoy for good. With `graceMs` > 0 it first fails admin health checks and starts a
   * graceful listener drain, then waits up to `graceMs` for in-flight requests to reach zero.
   * Then SIGTERM, and SIGKILL if the process outlives `killAfterMs` (default 5 s). Resolves once
   * the child has exited; safe to call twice.
   */
  async stop(options: { readonly graceMs?: number; readonly killAfterMs?: number } = {}): Promise<void> {
    this.#stopRequested = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const child = this.#child;
    if (child !== undefined && isAlive(child)) {
      this.#state = 'stopping';
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      if ((options.graceMs ?? 0) > 0) await this.#drainFor(options.graceMs ?? 0, child);
      const killAfterMs = options.killAfterMs ?? 5000;
      if (isAlive(child)) child.kill('SIGTERM');
      if (!(await settlesWithin(exited, killAfterMs))) {
        this.#log.warn({ pid: child.pid, killAfterMs }, 'Envoy ignored SIGTERM; sending SIGKILL');
        child.kill('SIGKILL');
        await settlesWithin(exited, killAfterMs);
      }
    }
    this.#state = 'stopped';
    process.off('exit', this.#killOnExit);
    if (this.#ownsWorkDir && this.#workDir !== undefined) {
      const dir = this.#workDir;
      this.#workDir = undefined; // a later start() gets a fresh one
      await rm(dir, { recursive: true, force: true });
    }
  }

  async #drainFor(graceMs: number, child: ChildProcess): Promise<void> {
    const url = this.adminUrl;
    if (url === undefined) return;
    try {
      await drainEnvoy(url, graceMs, () => isAlive(child));
      this.#log.info({ graceMs }, 'Envoy drained');
    } catch (err) {
      this.#log.warn({ err: errorMessage(err) }, 'Envoy drain failed; stopping anyway');
    }
  }

  async #prepare(): Promise<void> {
    if (this.#workDir === undefined) {
      this.#ownsWorkDir = this.#opts.workDir === undefined;
      this.#workDir = this.#opts.workDir ?? (await mkdtemp(join(tmpdir(), 'portcullis-envoy-')));
    }
    await mkdir(this.#workDir, { recursive: true });
    if ('bootstrapPath' in this.#opts) {
      this.#configPath = this.#opts.bootstrapPath;
    } else {
      this.#configPath = join(this.#workDir, WORK_FILES.bootstrap);
      await writeFileAtomic(this.#configPath, JSON.stringify(this.#opts.bootstrap, null, 2));
    }
  }

  #spawn(initial: boolean): Promise<void> {
    const dir = this.#workDir as string;
    return new Promise((resolve, reject) => {
      void unlink(join(dir, WORK_FILES.adminAddress)).catch(() => {});
      const [cmd, args] = this.#command(dir);
      const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      this.#child = child;
      this.#adminUrl = undefined;
      this.#state = 'running';
      let spawnedAt: number | undefined;
      let finished = false;
      const finish = (code: number | null, signal: NodeJS.Signals | null, err?: Error): void => {
        if (finished) return;
        finished = true;
        const uptimeMs = spawnedAt === undefined ? 0 : Date.now() - spawnedAt;
        this.#onExit(
          child,
          { code, signal, expected: this.#state === 'stopping', uptimeMs },
          initial && err !== undefined,
        );
      };
      this.#pipeLines(child, 'stdout');
      this.#pipeLines(child, 'stderr');
      child.once('spawn', () => {
        spawnedAt = Date.now();
        const pid = child.pid ?? -1;
        this.#log.debug({ pid, restarts: this.#restarts, cmd, args }, 'Envoy started');
        if (this.#restarts > 0) this.#log.info({ pid, restarts: this.#restarts }, 'Envoy restarted');
        this.emit('started', { pid, restarts: this.#restarts });
        resolve();
      });
      child.on('error', (err) => {
        if (spawnedAt !== undefined)
          return void this.#log.warn({ err: errorMessage(err) }, 'Envoy child error');
        this.#log.error({ binary: this.#opts.binary, err: errorMessage(err) }, 'Envoy could not be spawned');
        finish(null, null, err);
        reject(
          new PortcullisError('ENVOY_START_FAILED', `cannot run ${this.#opts.binary}: ${err.message}`, {
            cause: err,
          }),
        );
      });
      child.once('exit', (code, signal) => finish(code, signal));
    });
  }

  #command(dir: string): [string, string[]] {
    return envoyCommand({
      binary: this.#opts.binary,
      configPath: this.#configPath as string,
      workDir: dir,
      logLevel: this.#logLevel,
      componentLogLevels: this.#capSensitive ? sensitiveComponentCaps(this.#logLevel) : undefined,
      concurrency: this.#opts.concurrency ?? 2,
      hotRestart: this.#opts.hotRestart ?? 'dynamic-base-id',
      extraArgs: this.#opts.extraArgs ?? [],
      setpriv: setprivPath(),
    });
  }

  #pipeLines(child: ChildProcess, stream: 'stdout' | 'stderr'): void {
    const input = child[stream];
    if (input === null) return;
    const pid = child.pid;
    createInterface({ input, crlfDelay: Infinity }).on('line', (line) => {
      if (line === '') return;
      // Envoy writes its own log to stderr and the access log (one JSON object a request) to stdout.
      // Every value is redacted (shared/redact.ts): paths carry OAuth codes and handoffs, and
      // debug lines headers with credentials and cookies.
      const request = stream === 'stdout' ? parseAccessLogLine(line) : undefined;
      if (request !== undefined) {
        const redacted = Object.fromEntries(
          Object.entries(request).map(([key, value]) => [
            key,
            typeof value === 'string' ? this.#redact(value) : value,
          ]),
        );
        return void this.#log.info(redacted, 'request');
      }
      const parsed = parseEnvoyLogLine(line, stream);
      this.#log[parsed.level]({ pid, envoy: parsed.component ?? stream }, this.#redact(parsed.message));
    });
  }

  #onExit(child: ChildProcess, info: ExitInfo, spawnFailed: boolean): void {
    if (this.#child === child) this.#child = undefined;
    this.#adminUrl = undefined;
    this.#lastExit = info;
    if (this.#opts.hotRestart !== 'disabled' && this.#workDir !== undefined)
      removeHotRestartSegment(this.#workDir);
    this.emit('exited', info);
    if (info.expected) return void this.#log.info({ code: info.code, signal: info.signal }, 'Envoy stopped');
    this.#log.error(
      { code: info.code, signal: info.signal, uptimeMs: info.uptimeMs },
      'Envoy exited unexpectedly',
    );
    if (this.#policy === false || spawnFailed) {
      this.#state = 'stopped';
      return;
    }
    if (info.uptimeMs >= this.#policy.resetAfterMs) this.#delayMs = this.#policy.initialDelayMs;
    const delayMs = this.#delayMs;
    this.#delayMs = Math.min(delayMs * 2, this.#policy.maxDelayMs);
    this.#restarts += 1;
    this.#state = 'backoff';
    this.#log.warn({ delayMs, attempt: this.#restarts }, 'restarting Envoy');
    this.emit('restarting', { delayMs, attempt: this.#restarts });
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#spawn(false).catch((err: unknown) =>
        this.#log.error({ err: errorMessage(err) }, 'Envoy restart failed'),
      );
    }, delayMs);
  }
}

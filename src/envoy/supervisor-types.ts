import type { Logger } from '../shared/logger.js';
import type { Bootstrap } from './bootstrap.js';
import type { EnvoyLogLevel } from './log-lines.js';

/** Backoff between restarts after unexpected exits: doubles from initial up to max. */
export interface RestartPolicy {
  /** First delay. Default 250 ms. */
  readonly initialDelayMs?: number;
  /** Ceiling. Default 30 s. */
  readonly maxDelayMs?: number;
  /** A run that lasted this long resets the delay to initial. Default 60 s. */
  readonly resetAfterMs?: number;
}

/** Options shared by both ways of giving the bootstrap. */
export interface CommonOptions {
  /** Envoy executable (from `locateEnvoy`). */
  readonly binary: string;
  /** Where the bootstrap, base id and admin address files go. Default: a fresh temp dir, removed by `stop()`. */
  readonly workDir?: string;
  readonly logger?: Logger;
  /** Appended to the command line; a `--log-format` here turns off level parsing. */
  readonly extraArgs?: readonly string[];
  /** Worker threads. Default 2. */
  readonly concurrency?: number;
  /** Envoy's own log level. Default `warning`: Envoy's info start-up banner is long. */
  readonly logLevel?: EnvoyLogLevel;
  /**
   * Keep Envoy's secret-bearing loggers (`SENSITIVE_ENVOY_COMPONENTS`) at info when `logLevel` is
   * debug or trace. Default true; false when the operator set `proxy_log_level` (asked for it).
   */
  readonly capSensitiveComponents?: boolean;
  /**
   * `dynamic-base-id` (default): `--use-dynamic-base-id --base-id-path`, so several Envoys share a
   * machine and hot restart stays possible. `disabled`: `--disable-hot-restart`, no shared memory.
   */
  readonly hotRestart?: 'dynamic-base-id' | 'disabled';
  /** Restart after unexpected exits (default policy), or `false` to stay down. */
  readonly restart?: RestartPolicy | false;
}

/** Options for `EnvoySupervisor`: a bootstrap object (written atomically) or an existing file. */
export type EnvoySupervisorOptions = CommonOptions &
  ({ readonly bootstrap: Bootstrap } | { readonly bootstrapPath: string });

/** Payloads of the supervisor's events. */
export interface SupervisorEvents {
  started: [{ readonly pid: number; readonly restarts: number }];
  exited: [ExitInfo];
  restarting: [{ readonly delayMs: number; readonly attempt: number }];
}

/** How one Envoy process ended. `expected` is true when `stop()` ended it. */
export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly expected: boolean;
  readonly uptimeMs: number;
}

/** Lifecycle of the supervisor, not of one process. */
export type SupervisorState = 'idle' | 'running' | 'backoff' | 'stopping' | 'stopped';

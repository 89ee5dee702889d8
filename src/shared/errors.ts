import type { ErrorCode } from './error-codes.js';

export type { ErrorCode };

/**
 * One error class for the whole project. Every failure a user can see carries a stable `code`
 * (one of ERROR_CODES, error-codes.ts, listed in docs/reference.md) so that logs, tests and operators can match on it instead of
 * on message text, and an optional `cause` so the original error is never lost.
 */
export class PortcullisError extends Error {
  /** Stable, machine-readable identifier such as `CONFIG_INVALID` or `ENVOY_NOT_FOUND`. */
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'PortcullisError';
    this.code = code;
  }
}

/**
 * One problem found while validating input, with the key path it belongs to
 * (for example `routes[3].to[1]`). Validators return every problem they find instead of
 * throwing on the first, so a user fixes a config in one pass.
 */
export interface Problem {
  readonly path: string;
  readonly message: string;
  /** 1-based line in the source file, when the source format can tell. */
  readonly line?: number;
}

/** Formats a problem as `path: message` (with ` (line N)` when known), the form every log and CLI uses. */
export function formatProblem(problem: Problem): string {
  const where = problem.path === '' ? '' : `${problem.path}: `;
  const line = problem.line === undefined ? '' : ` (line ${problem.line})`;
  return `${where}${problem.message}${line}`;
}

/**
 * Thrown when a stage of the config pipeline finds problems. Carries all of them, so the reload
 * loop can log every one and keep the last good config.
 */
export class ValidationError extends PortcullisError {
  readonly problems: readonly Problem[];

  constructor(problems: readonly Problem[], source?: string) {
    const head = source === undefined ? 'invalid configuration' : `invalid configuration in ${source}`;
    super('CONFIG_INVALID', `${head}:\n${problems.map((p) => `  - ${formatProblem(p)}`).join('\n')}`);
    this.name = 'ValidationError';
    this.problems = problems;
  }
}

/** Returns the message of anything thrown, without a stack trace, for user-facing logs. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/**
 * The one place where failures of IdP calls (openid-client, oauth4webapi, fetch, timeouts) become
 * IdpError: `unavailable` when the IdP could not be reached or answered with a server error (try
 * again later; a refresh keeps the session), `refused` when it answered and the answer was no or
 * did not pass a check (a refresh that gets this ends the session).
 */
import {
  AuthorizationResponseError,
  ClientError,
  ResponseBodyError,
  WWWAuthenticateChallengeError,
} from 'openid-client';
import { IdpError } from '../types.js';

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'OAUTH_TIMEOUT',
  'OAUTH_ABORT',
]);

/** Every error in `err`'s cause chain (bounded), outermost first. */
function causes(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = err; current !== undefined && chain.length < 8; ) {
    chain.push(current);
    current = current instanceof Error ? current.cause : undefined;
  }
  return chain;
}

/** True when `err` (or a cause) says the IdP was not reached in time or at all. */
function unreachable(err: unknown): boolean {
  return causes(err).some((cause) => {
    if (!(cause instanceof Error)) return false;
    if (cause.name === 'TimeoutError' || cause.name === 'AbortError') return true;
    if (cause instanceof TypeError && cause.message === 'fetch failed') return true;
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' && NETWORK_CODES.has(code);
  });
}

/** Codes of a deadline that passed (ours, undici's, openid-client's), as opposed to a refused or lost connection. */
const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'OAUTH_TIMEOUT',
]);

/** True when `err` (or a cause) is a deadline that passed. */
function timedOut(err: unknown): boolean {
  return causes(err).some(
    (cause) =>
      cause instanceof Error &&
      (cause.name === 'TimeoutError' || TIMEOUT_CODES.has(String((cause as { code?: unknown }).code))),
  );
}

/** The HTTP status of the IdP's answer, when the error carries one. */
function status(err: unknown): number | undefined {
  for (const cause of causes(err)) {
    if (cause instanceof ResponseBodyError || cause instanceof WWWAuthenticateChallengeError)
      return cause.status;
    if (cause instanceof Response) return cause.status;
    if (cause instanceof Error && cause.cause instanceof Response) return cause.cause.status;
  }
  return undefined;
}

/** A message safe to show and log: the IdP's error code and description, or the check that failed. */
function describe(err: unknown): string {
  if (err instanceof ResponseBodyError || err instanceof AuthorizationResponseError)
    return err.error_description === undefined ? err.error : `${err.error}: ${err.error_description}`;
  // openid-client's ClientError says what kind of check failed; its cause (oauth4webapi) says which.
  if (err instanceof ClientError && err.cause instanceof Error) return err.cause.message;
  return err instanceof Error ? err.message : String(err);
}

/**
 * Maps any failure of `action` (e.g. 'token request') onto IdpError. `phase: 'discovery'` makes
 * every failure `unavailable`: without metadata nothing was refused, try again later.
 */
export function toIdpError(err: unknown, action: string, phase: 'call' | 'discovery' = 'call'): IdpError {
  if (err instanceof IdpError) return err;
  const code = status(err);
  const kind =
    phase === 'discovery' || unreachable(err) || (code !== undefined && (code >= 500 || code === 429))
      ? 'unavailable'
      : 'refused';
  // A refused connection and a deadline are told apart: "down" and "slow" need different fixes.
  const reason = !unreachable(err)
    ? describe(err)
    : timedOut(err)
      ? 'the IdP did not answer in time'
      : 'the IdP could not be reached';
  return new IdpError(kind, `${action} failed: ${reason}`, { cause: err });
}

/** An IdP REST call (GitHub's user API) that answered `status`, not 2xx. */
export function statusError(status: number, action: string): IdpError {
  const kind = status >= 500 || status === 429 ? 'unavailable' : 'refused';
  return new IdpError(kind, `${action} failed: the IdP answered HTTP ${status}`);
}

/** A call made with a deadline: `fetch` whose signal also aborts after `timeoutMs`. */
export function fetchWithTimeout(fetchImpl: typeof fetch, timeoutMs: number): typeof fetch {
  return (input, init) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = init?.signal == null ? timeout : AbortSignal.any([init.signal, timeout]);
    return fetchImpl(input, { ...init, signal });
  };
}

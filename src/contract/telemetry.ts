/**
 * What the services report for metrics, injected so the services stay free of any
 * metrics library: the runtime passes a prom-client implementation, tests and tools `NO_TELEMETRY`.
 * Every method is cheap and never throws (a metric must never fail a request).
 */
export interface Telemetry {
  /** One ext_authz Check answered: its outcome and how long deciding took, in seconds. */
  decision(outcome: DecisionOutcome, seconds: number): void;
  /** One sign-in ended at the callback: a session was made, or the user saw an error page. */
  signIn(outcome: 'success' | 'failure'): void;
  /** One token refresh ended (`refreshed`, `ended` when the IdP refused, `kept` when it was down). */
  refresh(outcome: 'refreshed' | 'ended' | 'kept'): void;
  /** One session ended by sign-out. */
  signOut(): void;
  /** One session-store call failed because the store was unreachable (`operation`: get, put, ...). */
  storeError(operation: string): void;
}

/**
 * How a Check was answered: allowed; sent to sign in (302); 401 for API clients without a session;
 * denied by policy (403); no such route (404); the session store was down (503); or the
 * authorizer failed (`error`, answered with a gRPC error, which Envoy turns into 403/503).
 */
export type DecisionOutcome =
  | 'allow'
  | 'sign_in'
  | 'unauthenticated'
  | 'deny'
  | 'not_found'
  | 'unavailable'
  | 'error';

/** The outcome of a Check from the HTTP status the client gets (undefined: allowed). */
export function decisionOutcome(status: number | undefined): DecisionOutcome {
  if (status === undefined) return 'allow';
  if (status === 302) return 'sign_in';
  if (status === 401) return 'unauthenticated';
  if (status === 404) return 'not_found';
  if (status === 503) return 'unavailable';
  if (status >= 500) return 'error';
  return 'deny';
}

/** Telemetry that records nothing. */
export const NO_TELEMETRY: Telemetry = {
  decision: () => {},
  signIn: () => {},
  refresh: () => {},
  signOut: () => {},
  storeError: () => {},
};

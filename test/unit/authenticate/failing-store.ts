// Stores that cannot be reached: every call rejects with StoreUnavailableError, as the Redis and
// remote databroker backends do during an outage. For the fail-closed tests of sign-in, sign-out,
// the refresher and the authorizer.
import type { Session, SessionStore } from '../../../src/session/session.js';
import { StoreUnavailableError, type RecordBackend } from '../../../src/session/records.js';

/** The error every call of the failing stores rejects with. */
export function outage(): StoreUnavailableError {
  return new StoreUnavailableError('redis 127.0.0.1:6379: connection refused (test outage)');
}

/** Which SessionStore calls fail; the others go to `inner`. */
export interface FailingCalls {
  get?: boolean;
  put?: boolean;
  delete?: boolean;
}

/**
 * `inner` with the chosen calls rejecting (all of them when `calls` is omitted), switchable at
 * run time through the returned `fail` object; no getSync (a remote store). `calls` counts every
 * call made, failed or not.
 */
export function failingSessions(
  inner: SessionStore,
  initially: FailingCalls = { get: true, put: true, delete: true },
): SessionStore & { fail: FailingCalls; calls: string[] } {
  const fail: FailingCalls = { ...initially };
  const calls: string[] = [];
  return {
    fail,
    calls,
    get: (id: string) => {
      calls.push(`get ${id}`);
      return fail.get === true ? Promise.reject(outage()) : inner.get(id);
    },
    put: (session: Session) => {
      calls.push(`put ${session.id}`);
      return fail.put === true ? Promise.reject(outage()) : inner.put(session);
    },
    delete: (id: string) => {
      calls.push(`delete ${id}`);
      return fail.delete === true ? Promise.reject(outage()) : inner.delete(id);
    },
    onInvalidate: (listener) => inner.onInvalidate(listener),
  };
}

/** A RecordBackend that cannot be reached: every call rejects; watch never reports anything. */
export function unreachableBackend(): RecordBackend {
  const reject = (): Promise<never> => Promise.reject(outage());
  return {
    get: reject,
    put: reject,
    delete: reject,
    query: reject,
    watch: () => () => {},
    acquireLease: reject,
    releaseLease: reject,
    ping: reject,
    close: () => Promise.resolve(),
  };
}

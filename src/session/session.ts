/**
 * A signed-in user's session as the databroker keeps it, server-side. Cookies and tokens carry only
 * `id`; everything else stays here. Times are Unix milliseconds.
 */
export interface Session {
  readonly id: string;
  readonly userId: string;
  readonly email: string | undefined;
  readonly name: string | undefined;
  /** Group ids or names as the identity provider sent them (the `groups` claim). */
  readonly groups: readonly string[];
  /** Every identity-token claim, for `claim/<name>` policies and `jwt_claims_headers`. */
  readonly claims: Readonly<Record<string, unknown>>;
  readonly issuedAt: number;
  readonly expiresAt: number;
}

/** Reads and writes sessions. The memory and Redis backends implement it (same conformance tests). */
export interface SessionStore {
  get(id: string): Promise<Session | undefined>;
  /** Synchronous read, when the backend holds sessions in this process (the authorize fast path). */
  getSync?(id: string): Session | undefined;
  put(session: Session): Promise<void>;
  delete(id: string): Promise<void>;
  /** Calls `listener` with the id of every session deleted or replaced, so caches drop it at once. */
  onInvalidate(listener: (id: string) => void): () => void;
}

import type { Session, SessionStore } from '../session/session.js';

/**
 * Sessions in this process's memory: for one instance (all-in-one). Lost on restart, which forces
 * users to sign in again (the spec's documented behaviour for the in-memory store). Expired
 * sessions are never returned and are dropped when read.
 */
export class MemorySessionStore implements SessionStore {
  private readonly sessions = new Map<string, Session>();
  private readonly listeners = new Set<(id: string) => void>();

  constructor(private readonly now: () => number = Date.now) {}

  async get(id: string): Promise<Session | undefined> {
    return this.getSync(id);
  }

  /** Synchronous read for the in-process authorize fast path. */
  getSync(id: string): Session | undefined {
    const session = this.sessions.get(id);
    if (session === undefined) return undefined;
    if (session.expiresAt <= this.now()) {
      this.sessions.delete(id);
      return undefined;
    }
    return session;
  }

  async put(session: Session): Promise<void> {
    const replaced = this.sessions.has(session.id);
    this.sessions.set(session.id, session);
    if (replaced) this.notify(session.id);
  }

  async delete(id: string): Promise<void> {
    if (this.sessions.delete(id)) this.notify(id);
  }

  onInvalidate(listener: (id: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Number of sessions held (expired ones included until read). */
  get size(): number {
    return this.sessions.size;
  }

  private notify(id: string): void {
    for (const listener of this.listeners) listener(id);
  }
}
